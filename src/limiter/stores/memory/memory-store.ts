/**
 * The in-process store: every decision is a synchronous computation on one subject's state, so
 * it is atomic within the process without locks.
 *
 * Memory stays bounded without timers: log entries older than the longest window leave on each
 * access (trim), and every check also inspects two subjects' deadlines in a round ({@link Deadlines}),
 * dropping those whose state can no longer affect any decision.
 *
 * Eviction works like Redis key TTLs: a subject's state matters for D more milliseconds after a
 * decision at time t (its longest window, or its ban's end − t), measured on the store's clock from
 * that call. When callers omit `now` this is simply "every stored time has passed". When they pass
 * explicit times (replays, tests) those need not be monotone across subjects, so eviction never
 * compares one subject's times with another's: only the clock's elapsed time counts.
 */
import { type Clock, systemClock } from '../../clock.js';
import { firstAdmitted } from '../../first-admitted.js';
import type { Decision, DecisionCode, LimiterStore, NormalizedRule, StoreCheck, StorePeek, StoreUndo } from '../../types.js';
import { createCounter, type FixedWindowCounter, findCounter, type SlidingCounter, type TokenBucket } from './counters.js';
import { Deadlines } from './deadlines.js';
import { addToFilter, mayHold } from './request-ids.js';
import { type MemorySnapshot, restoreSnapshot } from './snapshot.js';
import { collectSnapshot, type SnapshotBounds, type SnapshotText, snapshotSteps, writeSnapshotJson } from './snapshot-writer.js';
import { SubjectLog } from './subject-log.js';
import { isRepeat, leastRecent, type Owner, SubjectState } from './subject-state.js';

export interface MemoryStoreOptions {
  /** Time when a call passes no `now`; default the process clock. */
  clock?: Clock;
  /**
   * The most subjects held (default: no limit). A subject's state lives as long as its longest
   * window (a day for "50 a day"), about 1 KB each with request ids: distinct subjects at a steady
   * rate would fill any heap. At the limit a new subject first takes an expired subject's place;
   * else one live subject is dropped (it forgets its counts: {@link MemoryStore.evictedLive}),
   * chosen so that no owner can push out another's state (see `ownerOf`); when none may be
   * dropped the call rejects with {@link StoreCapacityError} and nothing is recorded.
   */
  maxSubjects?: number;
  /**
   * Who a subject's state belongs to (a tenant), for fair eviction at `maxSubjects`: an owner
   * holding at least its fair share (maxSubjects ÷ owners holding state) makes room from its own
   * subjects; one below it, from the owner holding the most. Either way the least recently
   * checked subject goes (sampled), one without a ban in force before a banned one. Default: one
   * owner for all.
   */
  ownerOf?: (subject: string) => string;
  /** Subjects never evicted while live (a tenant's quota buckets): their owner cannot reset them by creating others. */
  pinned?: (subject: string) => boolean;
}

/** The rejection of a call that would create a subject at `maxSubjects` when no live subject may make room. */
export class StoreCapacityError extends Error {
  override name = 'StoreCapacityError';
}

/** Subjects inspected for eviction per check: enough to outpace the creation of subjects. */
const SWEEP_PER_CHECK = 2;
/** At the size limit, oldest subjects inspected for an expired one before a live one is dropped. */
const RECLAIM_SCAN = 8;

/** State of one evaluation, kept on the store to avoid allocating it per call. */
interface Evaluation {
  code: DecisionCode;
  rule: number;
  retryAfterMs: number;
  /** max banMs of the hit rules. */
  banMs: number;
  /** A rule of a counter algorithm is hit (a deferral cannot wait it out: it counts at t). */
  counterHit: boolean;
}

export class MemoryStore implements LimiterStore {
  private readonly clock: Clock;
  private readonly subjects = new Map<string, SubjectState>();
  private readonly deadlines = new Deadlines<SubjectState>();
  /** Latest clock reading: the time eviction compares deadlines with. */
  private clockNow = Number.NEGATIVE_INFINITY;
  /** Increments per check or undo, so state shared by several rules is updated once. */
  private stamp = 0;
  private readonly evaluation: Evaluation = { code: 'OK', rule: -1, retryAfterMs: 0, banMs: 0, counterHit: false };

  private readonly maxSubjects: number;
  private evictedLiveCount = 0;
  private readonly owners = new Map<string, Owner>();
  private readonly ownerOf: (subject: string) => string;
  private readonly pinned: (subject: string) => boolean;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    const max = options.maxSubjects ?? Number.POSITIVE_INFINITY;
    if (!(max >= 1)) throw new RangeError(`maxSubjects must be at least 1, got ${String(options.maxSubjects)}`);
    this.maxSubjects = max;
    this.ownerOf = options.ownerOf ?? (() => '');
    this.pinned = options.pinned ?? (() => false);
  }

  /** Subjects dropped while their state could still matter, to stay within `maxSubjects`. */
  get evictedLive(): number {
    return this.evictedLiveCount;
  }

  /** Subjects currently held (diagnostics and tests). */
  get size(): number {
    return this.subjects.size;
  }

  /** Live log entries of a subject (diagnostics and tests). */
  logSize(subject: string): number {
    return this.subjects.get(subject)?.log?.size ?? 0;
  }

  check(request: StoreCheck): Promise<Decision> {
    const { subject, rules, requestId, now, countAt } = request;
    const c = this.readClock();
    const t = now ?? c;
    // The attempt's count time: the log counts and records it there (types.ts, step 4).
    let a = countAt !== undefined && countAt > t ? countAt : t;
    this.sweep();
    let state = this.subjects.get(subject);
    if (state !== undefined) state.usedAt = c;
    // Step 2 before any trim or count, so a banned subject costs one map lookup (two with an id:
    // step 1, the retry of an admitted send, still comes first and needs the log).
    const { deferUntil } = request;
    if (
      state !== undefined &&
      state.banEnd > t &&
      deferUntil === undefined &&
      !(requestId !== undefined && isRepeat(state, rules, requestId, t))
    ) {
      return Promise.resolve({ allowed: false, code: 'BANNED', retryAfterMs: state.banEnd - t, counts: [], at: t });
    }
    let longest = 0;
    let keepsLog = requestId !== undefined;
    let relevance = 0;
    for (let index = 0; index < rules.length; index++) {
      const rule = rules[index]!;
      if (rule.windowMs > longest) longest = rule.windowMs;
      if (rule.algorithm === 'sliding-log') keepsLog = true;
      // A sliding counter still reads a bucket 11 buckets after it was written.
      const span = rule.algorithm === 'sliding-counter' ? 11 * Math.ceil(rule.windowMs / 10) : rule.windowMs;
      if (span > relevance) relevance = span;
    }
    state?.log?.trim(t - longest);
    const counts = new Array<number>(rules.length);
    if (requestId !== undefined && state !== undefined && mayHold(state, requestId) && state.log?.has(requestId)) {
      this.evaluate(state, rules, t, a, counts);
      return Promise.resolve({ allowed: true, code: 'OK', retryAfterMs: 0, counts, at: t });
    }
    const evaluation = this.evaluate(state, rules, t, a, counts, deferUntil === undefined);
    let deferredTo: number | undefined;
    if (evaluation.code !== 'OK' && deferUntil !== undefined) {
      const { log, banEnd } = state!;
      const from = log?.upperBound(Number.NEGATIVE_INFINITY) ?? 0;
      const u = log ? firstAdmitted(rules, (i) => log.at(from + i), log.size, Math.max(a, banEnd)) : Math.max(a, banEnd);
      if (evaluation.counterHit || u > deferUntil) {
        const retryAfterMs = evaluation.counterHit ? evaluation.retryAfterMs : u - t;
        const refusal: Decision = { allowed: false, code: evaluation.code, retryAfterMs, counts, at: t };
        if (evaluation.code === 'RATE_LIMITED') refusal.rule = evaluation.rule;
        return Promise.resolve(refusal);
      }
      deferredTo = a = u;
    }
    if (evaluation.code === 'OK' || deferredTo !== undefined) {
      if (!state) state = this.create(subject);
      if (!state) return this.full();
      if (keepsLog) {
        if (!state.log) state.log = new SubjectLog();
        if (state.log.size === 0) state.idBitsLow = state.idBitsHigh = 0;
        state.log.insert(a, requestId);
        if (requestId !== undefined) addToFilter(state, requestId);
      }
      if (a > t && a > state.scheduled) state.scheduled = a;
      const stamp = ++this.stamp;
      for (let index = 0; index < rules.length; index++) {
        const rule = rules[index]!;
        if (rule.algorithm === 'sliding-log') continue;
        let counter = findCounter(state.counters, rule.algorithm, rule.windowMs, rule.limit);
        if (!counter) {
          counter = createCounter(rule.algorithm, rule.windowMs, rule.limit);
          if (!state.counters) state.counters = [];
          state.counters.push(counter);
        }
        if (counter.stamp === stamp) continue;
        counter.stamp = stamp;
        counter.admit(t);
      }
      // An entry recorded at a > t matters a − t longer.
      const until = c + (a - t) + relevance;
      if (until > state.deadline) {
        state.deadline = until;
        this.deadlines.set(state, until);
      }
      const admitted: Decision = { allowed: true, code: 'OK', retryAfterMs: 0, counts, at: t };
      if (deferredTo !== undefined) admitted.deferredTo = deferredTo;
      return Promise.resolve(admitted);
    }
    if (evaluation.banMs > 0) {
      if (!state) state = this.create(subject);
      if (!state) return this.full();
      this.setBan(state, t + evaluation.banMs, c + evaluation.banMs);
    }
    return Promise.resolve({
      allowed: false,
      code: 'RATE_LIMITED',
      rule: evaluation.rule,
      retryAfterMs: evaluation.retryAfterMs,
      counts,
      at: t,
    });
  }

  peek(request: StorePeek): Promise<Decision> {
    return Promise.resolve(this.look(request, request.now ?? this.readClock()));
  }

  banIfHit(request: StorePeek): Promise<Decision> {
    const { subject } = request;
    const c = this.readClock();
    const t = request.now ?? c;
    const decision = this.look(request, t);
    // `evaluation` is the look's (a subject under a ban in force reads BANNED, banMs 0).
    const banMs = decision.code === 'RATE_LIMITED' ? this.evaluation.banMs : 0;
    if (banMs > 0) {
      const state = this.subjects.get(subject) ?? this.create(subject);
      if (!state) return this.full();
      this.setBan(state, t + banMs, c + banMs);
    }
    return Promise.resolve(decision);
  }

  /** A peek at `t` (the request's `now`, else the clock): trims, then steps 2 and 4 without recording or banning. */
  private look(request: StorePeek, t: number): Decision {
    const { rules } = request;
    const state = this.subjects.get(request.subject);
    let longest = 0;
    for (let index = 0; index < rules.length; index++) if (rules[index]!.windowMs > longest) longest = rules[index]!.windowMs;
    state?.log?.trim(t - longest);
    const counts = new Array<number>(rules.length);
    const { code, rule, retryAfterMs } = this.evaluate(state, rules, t, t, counts);
    const decision: Decision = { allowed: code === 'OK', code, retryAfterMs, counts, at: t };
    if (code === 'RATE_LIMITED') decision.rule = rule;
    return decision;
  }

  undo(request: StoreUndo): Promise<void> {
    const { rules, requestId, at } = request;
    const state = this.subjects.get(request.subject);
    if (state === undefined) return Promise.resolve();
    // With an id the logged time is the admission's own (`at` only repeats it); without one the
    // caller vouches for `at` and the log, which cannot tell anonymous entries apart, is left alone.
    // A scheduled attempt's entry is later than its decision time `at`, where its counters were written.
    const logged = requestId === undefined ? at : state.log?.remove(requestId);
    if (logged === undefined) return Promise.resolve();
    const a = Math.min(logged, at);
    const stamp = ++this.stamp;
    for (let index = 0; index < rules.length; index++) {
      const rule = rules[index]!;
      if (rule.algorithm === 'sliding-log') continue;
      const counter = findCounter(state.counters, rule.algorithm, rule.windowMs, rule.limit);
      if (!counter || counter.stamp === stamp) continue;
      counter.stamp = stamp;
      counter.undo(a);
    }
    return Promise.resolve();
  }

  reset(subject: string): Promise<void> {
    const state = this.subjects.get(subject);
    if (state) this.remove(state);
    return Promise.resolve();
  }

  ban(subject: string, ms: number, now: number | undefined): Promise<void> {
    const c = this.readClock();
    const t = now ?? c;
    const state = this.subjects.get(subject) ?? this.create(subject);
    if (!state) return this.full();
    if (t + ms > state.banEnd) this.setBan(state, t + ms, c + ms);
    return Promise.resolve();
  }

  unban(subject: string): Promise<boolean> {
    const state = this.subjects.get(subject);
    if (!state || state.banEnd === 0) return Promise.resolve(false);
    // Like a Redis ban key: there until its TTL (on the clock) has run out.
    const inForce = state.banDeadline > this.readClock();
    state.banEnd = 0;
    state.banDeadline = 0;
    return Promise.resolve(inForce);
  }

  /** What a restart keeps (snapshot.ts) within `bounds` (a number: the most entries), bans first, each owner its share. */
  snapshot(bounds: number | SnapshotBounds): MemorySnapshot {
    const now = this.readClock();
    return collectSnapshot(this.snapshotSteps(now, typeof bounds === 'number' ? { maxEntries: bounds } : bounds), now);
  }

  /** The same as JSON, written `sliceMs` (2) at a time with a `pause` between (snapshot-writer.ts): no long stall. */
  snapshotJson(bounds: SnapshotBounds, options: { sliceMs?: number; pause?: () => Promise<void> } = {}): Promise<SnapshotText> {
    const now = this.readClock();
    return writeSnapshotJson(this.snapshotSteps(now, bounds), now, options);
  }

  private snapshotSteps(now: number, bounds: SnapshotBounds) {
    return snapshotSteps(this.owners.values(), now, bounds, (state) => this.subjects.get(state.subject) === state);
  }

  /** Puts back a snapshot's subjects that still matter and are not held; returns how many. */
  restore(snapshot: MemorySnapshot): number {
    return restoreSnapshot(
      snapshot,
      this.readClock(),
      (subject) => this.subjects.has(subject),
      (subject) => this.create(subject),
      (state, deadline) => {
        state.deadline = deadline;
        this.deadlines.set(state, deadline);
      },
    );
  }

  close(): Promise<void> {
    this.subjects.clear();
    this.deadlines.clear();
    this.owners.clear();
    return Promise.resolve();
  }

  /** A new subject's state, or undefined at the size limit when nothing may make room. */
  private create(subject: string): SubjectState | undefined {
    const name = this.ownerOf(subject);
    let owner = this.owners.get(name);
    if (this.subjects.size >= this.maxSubjects && !this.makeRoom(owner)) return undefined;
    if (!owner) {
      owner = { name, subjects: new Set() };
      this.owners.set(name, owner);
    }
    const state = new SubjectState(subject, owner);
    state.usedAt = this.clockNow;
    this.subjects.set(subject, state);
    this.deadlines.add(state, state.deadline);
    owner.subjects.add(state);
    return state;
  }

  private full(): Promise<never> {
    return Promise.reject(new StoreCapacityError(`the limiter holds its most subjects (${this.maxSubjects}) and none may make room`));
  }

  private remove(state: SubjectState): void {
    this.subjects.delete(state.subject);
    this.deadlines.remove(state);
    const owner = state.owner;
    owner.subjects.delete(state);
    if (owner.subjects.size === 0 && this.owners.get(owner.name) === owner) this.owners.delete(owner.name);
  }

  /** Sets the ban's end (decision time) and its cleanup deadline (clock time). */
  private setBan(state: SubjectState, end: number, deadline: number): void {
    state.banEnd = end;
    state.banDeadline = deadline;
    if (deadline > state.deadline) {
      state.deadline = deadline;
      this.deadlines.set(state, deadline);
    }
  }

  private readClock(): number {
    const now = this.clock.now();
    if (now > this.clockNow) this.clockNow = now;
    return now;
  }

  /**
   * Steps 2 and 4 of the semantics (a check has already answered a ban in force; peek reaches
   * BANNED here, with counts) for an attempt at `a` ≥ `t`: fills `counts`, decides, records nothing.
   * `bans` false for a deferred check: its refusal bans nothing, so its retry holds no ban.
   */
  private evaluate(
    state: SubjectState | undefined,
    rules: readonly NormalizedRule[],
    t: number,
    a: number,
    counts: number[],
    bans = true,
  ): Evaluation {
    const evaluation = this.evaluation;
    evaluation.code = 'OK';
    evaluation.rule = -1;
    evaluation.retryAfterMs = 0;
    evaluation.banMs = 0;
    evaluation.counterHit = false;
    const log = state?.log;
    const counters = state?.counters;
    for (let index = 0; index < rules.length; index++) {
      const rule = rules[index]!;
      const w = rule.windowMs;
      let count: number;
      let retry = -1;
      switch (rule.algorithm) {
        case 'sliding-log': {
          if (!log) {
            count = 0;
            break;
          }
          if (state!.scheduled > a) {
            // A scheduled entry may be later than the attempt: every window containing it counts.
            count = log.windowMax(a, w, rule.limit);
            retry = log.windowRetry;
            break;
          }
          const low = log.windowStart(w, a - w);
          const high = log.newest <= a ? log.end : log.upperBound(a);
          count = high - low;
          if (count >= rule.limit) retry = log.at(low + count - rule.limit) + w - a;
          break;
        }
        case 'fixed-window': {
          const counter = findCounter(counters, 'fixed-window', w, rule.limit) as FixedWindowCounter | undefined;
          count = counter ? counter.countAt(t) : 0;
          if (count >= rule.limit) retry = (Math.floor(t / w) + 1) * w - t;
          break;
        }
        case 'sliding-counter': {
          const counter = findCounter(counters, 'sliding-counter', w, rule.limit) as SlidingCounter | undefined;
          const b = Math.ceil(w / 10);
          if (!counter) {
            count = 0;
            break;
          }
          const weighted = counter.weightedAt(t);
          count = Math.floor(weighted / b);
          if (weighted >= rule.limit * b) retry = b - counter.offset;
          break;
        }
        case 'token-bucket': {
          const counter = findCounter(counters, 'token-bucket', w, rule.limit) as TokenBucket | undefined;
          const interval = w / rule.limit;
          const x = counter ? counter.arrivalAt(t) : t;
          count = Math.ceil((x - t) / interval - 1e-9) + 0;
          if (x + interval - t > w) retry = Math.ceil(x + interval - w - t);
          break;
        }
      }
      counts[index] = count;
      if (retry >= 0) {
        if (evaluation.code === 'OK') {
          evaluation.code = 'RATE_LIMITED';
          evaluation.rule = index;
        }
        if (retry > evaluation.retryAfterMs) evaluation.retryAfterMs = retry;
        if (rule.algorithm !== 'sliding-log') evaluation.counterHit = true;
        // An attempt counted later than its decision time breaches nothing yet: it bans nothing.
        if (rule.banMs > evaluation.banMs && a === t && bans) evaluation.banMs = rule.banMs;
      }
    }
    if (state && state.banEnd > t) {
      evaluation.code = 'BANNED';
      evaluation.retryAfterMs = state.banEnd - t;
      evaluation.banMs = 0;
    } else if (evaluation.banMs > evaluation.retryAfterMs) {
      evaluation.retryAfterMs = evaluation.banMs;
    }
    return evaluation;
  }

  /**
   * One subject out, at the size limit, for a new subject of `creator` (undefined: an owner holding
   * nothing yet): an expired one among the oldest if there is one (the map keeps insertion order),
   * else a live one of the creator when it holds its fair share, else of the owner holding most.
   */
  private makeRoom(creator: Owner | undefined): boolean {
    let inspected = 0;
    for (const state of this.subjects.values()) {
      if (state.deadline <= this.clockNow) {
        this.remove(state);
        return true;
      }
      if (++inspected >= RECLAIM_SCAN) break;
    }
    const owners = this.owners.size + (creator ? 0 : 1);
    let donor = creator;
    if (!creator || creator.subjects.size < this.maxSubjects / owners) {
      for (const owner of this.owners.values()) if (!donor || owner.subjects.size > donor.subjects.size) donor = owner;
    }
    const victim = donor && leastRecent(donor, this.pinned, this.clockNow);
    if (!victim) return false;
    this.remove(victim);
    this.evictedLiveCount++;
    return true;
  }

  /** Inspects a few subjects and evicts those whose every stored time has passed. */
  private sweep(): void {
    for (let inspected = 0; inspected < SWEEP_PER_CHECK; inspected++) {
      const expired = this.deadlines.next(this.clockNow);
      if (expired) this.remove(expired);
    }
  }
}

/**
 * A deliberately naive model of the limiter semantics (src/limiter/types.ts), for property tests.
 *
 * Each subject keeps its full history of operations; every call recomputes every count, the
 * log's contents and each token bucket's tat by replaying that history from the start. Nothing is
 * clever, so the model is easy to check against the text and slow (tests keep sequences short).
 *
 * Assumptions: one rule set per subject (state is identified by rule index), and no cleanup during
 * a run (no Redis TTL runs out, no subject is evicted). Times may go backwards: what the stores then
 * keep of fixed-window and sliding-counter state is the rule of types.ts, replayed by
 * {@link indexCounts}.
 */
import type { Decision, NormalizedRule, StoreCheck, StorePeek, StoreUndo } from '../../src/limiter/types.js';

interface Admission {
  /** Its count time (the check's countAt, at least the decision time): where the log holds it. */
  time: number;
  /** Its decision time: where the counter algorithms counted it. */
  decisionTime: number;
  id: string | undefined;
  /** Written to the subject's log (the set had a sliding-log rule or an id was given). */
  logged: boolean;
}

/**
 * `undo` takes an admission back everywhere (an undo by request id); `undo-counters` only from the
 * counting algorithms (an undo without an id: its log entry, if any, stays).
 */
type Operation =
  | { kind: 'admit'; admission: Admission }
  /** `counterTime`: the time whose counter effects are undone (types.ts: min(entry time, at)). */
  | { kind: 'undo'; admission: Admission; counterTime: number }
  | { kind: 'undo-counters'; admission: Admission; counterTime: number }
  | { kind: 'trim'; horizon: number };

interface SubjectHistory {
  operations: Operation[];
  /** End of the stored ban; undefined when none is stored. */
  banEnd: number | undefined;
  /** The latest count time admitted later than its decision time (never lowered; gone with a reset). */
  scheduled: number;
}

/** Mirrors {@link LimiterStore} synchronously. */
export class ReferenceModel {
  private readonly subjects = new Map<string, SubjectHistory>();

  check(request: StoreCheck & { now: number }): Decision {
    const { subject, rules, requestId, now, countAt } = request;
    const history = this.historyOf(subject);
    const a = countAt !== undefined && countAt > now ? countAt : now;
    const horizon = now - longestWindow(rules);
    // Step 1: in the log and kept by this check's trim (time > t − L); then the trim runs.
    if (requestId !== undefined && logOf(history).some((entry) => entry.id === requestId && entry.time > horizon)) {
      history.operations.push({ kind: 'trim', horizon });
      return { allowed: true, code: 'OK', retryAfterMs: 0, counts: countsAt(history, rules, now, a), at: now };
    }
    // Step 2: a ban in force decides alone: no trim, no counts.
    if (history.banEnd !== undefined && history.banEnd > now) {
      return { allowed: false, code: 'BANNED', retryAfterMs: history.banEnd - now, counts: [], at: now };
    }
    history.operations.push({ kind: 'trim', horizon });
    const decision = decide(history, rules, now, a);
    if (decision.code === 'RATE_LIMITED') {
      const ban = maxBanOfHitRules(history, rules, now, a);
      if (ban > 0) history.banEnd = now + ban;
    } else if (decision.allowed) {
      const logged = requestId !== undefined || rules.some((rule) => rule.algorithm === 'sliding-log');
      history.operations.push({ kind: 'admit', admission: { time: a, decisionTime: now, id: requestId, logged } });
      if (a > now) history.scheduled = Math.max(history.scheduled, a);
    }
    return decision;
  }

  peek(request: StorePeek & { now: number }): Decision {
    const { subject, rules, now } = request;
    const history = this.historyOf(subject);
    history.operations.push({ kind: 'trim', horizon: now - longestWindow(rules) });
    return decide(history, rules, now, now);
  }

  /**
   * With an id: the logged admission with that id, if any. Without: the caller's promise (an
   * admission without id at `at`, undone at most once) is checked here, so a harness that breaks
   * it fails loudly instead of comparing against a meaningless model.
   */
  undo(request: StoreUndo): void {
    const { subject, requestId, at } = request;
    const history = this.historyOf(subject);
    if (requestId === undefined) {
      const admission = admissionsOf(history).find((candidate) => candidate.id === undefined && candidate.decisionTime === at);
      if (!admission) throw new Error(`model: no anonymous admission at ${at} left to undo`);
      history.operations.push({ kind: 'undo-counters', admission, counterTime: at });
      return;
    }
    const entry = logOf(history).find((candidate) => candidate.id === requestId);
    if (entry) history.operations.push({ kind: 'undo', admission: entry, counterTime: Math.min(entry.time, at) });
  }

  /** The decision time of the log entry with this id, if it is in the log (the `at` an undo passes). */
  loggedTime(subject: string, requestId: string): number | undefined {
    const history = this.subjects.get(subject);
    return history && logOf(history).find((entry) => entry.id === requestId)?.decisionTime;
  }

  reset(subject: string): void {
    this.subjects.delete(subject);
  }

  ban(subject: string, ms: number, now: number): void {
    const history = this.historyOf(subject);
    history.banEnd = Math.max(history.banEnd ?? 0, now + ms);
  }

  /** Whether a ban was in force at `now` (the stores may also report an ended, uncleaned ban). */
  unban(subject: string, now: number): boolean {
    const history = this.historyOf(subject);
    const inForce = history.banEnd !== undefined && history.banEnd > now;
    history.banEnd = undefined;
    return inForce;
  }

  private historyOf(subject: string): SubjectHistory {
    let history = this.subjects.get(subject);
    if (!history) {
      history = { operations: [], banEnd: undefined, scheduled: Number.NEGATIVE_INFINITY };
      this.subjects.set(subject, history);
    }
    return history;
  }
}

function longestWindow(rules: readonly NormalizedRule[]): number {
  return Math.max(...rules.map((rule) => rule.windowMs));
}

/** Steps 2 and 4 of the semantics, without side effects (a peek's BANNED reports counts). */
function decide(history: SubjectHistory, rules: readonly NormalizedRule[], now: number, a: number): Decision {
  const counts = countsAt(history, rules, now, a);
  if (history.banEnd !== undefined && history.banEnd > now) {
    return { allowed: false, code: 'BANNED', retryAfterMs: history.banEnd - now, counts, at: now };
  }
  const hits = rules.map((rule, index) => hitRetryAfter(history, rule, index, now, a)).map((retry, index) => ({ retry, index }));
  const hit = hits.filter((candidate) => candidate.retry !== undefined);
  if (hit.length === 0) return { allowed: true, code: 'OK', retryAfterMs: 0, counts, at: now };
  const ban = maxBanOfHitRules(history, rules, now, a);
  const retryAfterMs = Math.max(ban, ...hit.map((candidate) => candidate.retry as number));
  return { allowed: false, code: 'RATE_LIMITED', rule: hit[0]!.index, retryAfterMs, counts, at: now };
}

/** The ban a refusal imposes: none for an attempt counted later than its decision time (its breach is not yet). */
function maxBanOfHitRules(history: SubjectHistory, rules: readonly NormalizedRule[], now: number, a: number): number {
  let ban = 0;
  if (a > now) return ban;
  rules.forEach((rule, index) => {
    if (hitRetryAfter(history, rule, index, now, a) !== undefined) ban = Math.max(ban, rule.banMs);
  });
  return ban;
}

/** Admissions not undone (with or without an id): those an undo may still take back. */
function admissionsOf(history: SubjectHistory): Admission[] {
  const undone = new Set<Admission>();
  for (const operation of history.operations) {
    if (operation.kind === 'undo' || operation.kind === 'undo-counters') undone.add(operation.admission);
  }
  const result: Admission[] = [];
  for (const operation of history.operations) {
    if (operation.kind === 'admit' && !undone.has(operation.admission)) result.push(operation.admission);
  }
  return result;
}

/** The log: logged admissions not undone and not removed by a trim that came after them. */
function logOf(history: SubjectHistory): Admission[] {
  // A trim removes only what was in the log when it ran: replay in order.
  const log = new Set<Admission>();
  for (const operation of history.operations) {
    if (operation.kind === 'admit' && operation.admission.logged) log.add(operation.admission);
    else if (operation.kind === 'undo') log.delete(operation.admission);
    else if (operation.kind === 'trim') for (const admission of [...log]) if (admission.time <= operation.horizon) log.delete(admission);
  }
  return [...log];
}

function countsAt(history: SubjectHistory, rules: readonly NormalizedRule[], now: number, a: number): number[] {
  return rules.map((rule, index) => countOf(history, rule, index, now, a));
}

/**
 * The windows (u − w, u] a sliding-log rule counts for an attempt at `a`: u = a, and when a
 * scheduled admission later than `a` was made, every entry time in (a, a + w); each with its
 * entries' times, ascending.
 */
function slidingWindows(history: SubjectHistory, w: number, a: number): { u: number; times: number[] }[] {
  const log = logOf(history).map((entry) => entry.time);
  const ends = [a, ...(history.scheduled > a ? log.filter((time) => time > a && time < a + w) : [])];
  return ends.map((u) => ({
    u,
    times: log.filter((time) => time > u - w && time <= u).sort((x, y) => x - y),
  }));
}

function countOf(history: SubjectHistory, rule: NormalizedRule, index: number, now: number, a: number): number {
  const w = rule.windowMs;
  switch (rule.algorithm) {
    case 'sliding-log':
      return Math.max(...slidingWindows(history, w, a).map((window) => window.times.length));
    case 'fixed-window':
      return indexCounts(history, w, 0).get(Math.floor(now / w)) ?? 0;
    case 'sliding-counter': {
      const { weighted, b } = slidingCounter(history, rule, now);
      return Math.floor(weighted / b);
    }
    case 'token-bucket': {
      const T = w / rule.limit;
      const x = Math.max(tatOf(history, rule, index) ?? now, now);
      return Math.ceil((x - now) / T - 1e-9) + 0;
    }
  }
}

/** The retry delay when the rule is hit at `now` (an attempt at `a`), else undefined. */
function hitRetryAfter(history: SubjectHistory, rule: NormalizedRule, index: number, now: number, a: number): number | undefined {
  const w = rule.windowMs;
  switch (rule.algorithm) {
    case 'sliding-log': {
      const full = slidingWindows(history, w, a).filter((window) => window.times.length >= rule.limit);
      if (full.length === 0) return undefined;
      return Math.max(...full.map(({ u, times }) => times[times.length - rule.limit]! + w - u));
    }
    case 'fixed-window': {
      if (countOf(history, rule, index, now, a) < rule.limit) return undefined;
      return (Math.floor(now / w) + 1) * w - now;
    }
    case 'sliding-counter': {
      const { weighted, b, m } = slidingCounter(history, rule, now);
      return weighted >= rule.limit * b ? b - m : undefined;
    }
    case 'token-bucket': {
      const T = w / rule.limit;
      const x = Math.max(tatOf(history, rule, index) ?? now, now);
      if (!(x + T - now > w)) return undefined;
      return Math.ceil(x + T - w - now);
    }
  }
}

function slidingCounter(history: SubjectHistory, rule: NormalizedRule, now: number): { weighted: number; b: number; m: number } {
  const b = Math.ceil(rule.windowMs / 10);
  const k = Math.floor(now / b);
  const m = now - k * b;
  const counts = indexCounts(history, b, 10);
  const inBucket = (j: number) => counts.get(j) ?? 0;
  let S = 0;
  for (let j = k - 9; j <= k; j++) S += inBucket(j);
  const c = inBucket(k - 10);
  return { weighted: S * b + c * (b - m), b, m };
}

/**
 * The counts of a fixed-window rule (`size` = w, `keep` = 0) or a sliding-counter rule (`size` = b,
 * `keep` = 10) by window or bucket index, replaying the subject's admissions and undos by the rule
 * of types.ts: an admission adds 1 to its index; when it raises the newest index written from n to
 * n', the indices of the kept range n − keep..n that are not in n' − keep..n' are dropped (an index
 * written below n − keep, a time gone back that far, is never dropped); an undo subtracts 1 from
 * its index when that is stored and above 0.
 */
function indexCounts(history: SubjectHistory, size: number, keep: number): Map<number, number> {
  const counts = new Map<number, number>();
  let newest: number | undefined;
  for (const operation of history.operations) {
    if (operation.kind === 'trim') continue;
    const index = Math.floor((operation.kind === 'admit' ? operation.admission.decisionTime : operation.counterTime) / size);
    if (operation.kind === 'admit') {
      if (newest === undefined || index > newest) {
        const last = newest ?? index;
        for (let dropped = last - keep; dropped <= Math.min(last, index - keep - 1); dropped++) counts.delete(dropped);
        newest = index;
      }
      counts.set(index, (counts.get(index) ?? 0) + 1);
    } else {
      const count = counts.get(index);
      if (count !== undefined && count > 0) counts.set(index, count - 1);
    }
  }
  return counts;
}

/** Replays the subject's admissions and undos through GCRA. */
function tatOf(history: SubjectHistory, rule: NormalizedRule, _index: number): number | undefined {
  const T = rule.windowMs / rule.limit;
  let tat: number | undefined;
  for (const operation of history.operations) {
    if (operation.kind === 'admit') {
      const a = operation.admission.decisionTime;
      tat = Math.max(tat ?? a, a) + T;
    } else if ((operation.kind === 'undo' || operation.kind === 'undo-counters') && tat !== undefined) {
      tat = Math.max(tat - T, operation.counterTime);
    }
  }
  return tat;
}

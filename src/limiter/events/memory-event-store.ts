/**
 * The event rules' state in process (the embedded default, and the fallback while Redis is down).
 * Same semantics and hashing as the Redis store (`./types.ts`); beyond `maxSubjects` subjects or
 * `maxBytes` bytes of state, the oldest subjects (first created) are dropped.
 *
 * Bytes are counted per subject by the bounds of ./cost.ts (each unit of state at its measured
 * upper bound), updated whenever an op changes the subject; so the store's heap stays within
 * about `maxBytes`, however many values a tenant's rules keep per subject.
 */
import { type Clock, systemClock } from '../clock.js';
import { STATE_BYTES, seenFilterStateBytes } from './cost.js';
import { SEEN_SEGMENT_BYTES, seenSegment, ValueHasher } from './hashing.js';
import { HyperLogLog } from './hyperloglog.js';
import { type CheckOps, type EventOp, type EventResult, type EventStore, RISK_LIMITS } from './types.js';

export interface MemoryEventStoreOptions {
  clock?: Clock;
  /** Secret of the value digests (as the Redis store's `keySecret`). */
  keySecret?: string | Buffer;
  /** Most subjects kept; default 100,000. */
  maxSubjects?: number;
  /** Most bytes of state kept (counted as ./cost.ts bounds them); default 256 MiB. */
  maxBytes?: number;
}

interface Filter {
  generation: number;
  /** Its size in bits: a rule resized starts a new filter (as the Redis key names the size). */
  size: number;
  /** Its segments by number (0 for a one-segment filter), each made when a value first falls in it. */
  segments: Map<number, Uint8Array>;
  /** Bytes of its segments. */
  bytes: number;
}

/** Each state carries the bytes it was last counted at (`bytes`). */
type State = { bytes: number } & (
  | { kind: 'last-n'; outcomes: string[] }
  | { kind: 'distinct'; values: Map<string, number> }
  | { kind: 'seen'; filters: Filter[] }
  | { kind: 'claim'; until: number }
  /** A window's admissions, ascending by time; `member` '' when anonymous; `bannedUntil` 0: no ban. */
  | { kind: 'window'; entries: { at: number; member: string }[]; bannedUntil: number }
  /** distinct above the exact range: this generation's HLL, and the union with the last one's. */
  | { kind: 'hll'; generation: number; current: HyperLogLog; union: HyperLogLog }
);

/** An HLL's fixed part in process with its share of the subject: object, arrays, histogram (as cost.ts). */
const HLL_FIXED_BYTES = 4096;

/** A state's bytes by the bounds of ./cost.ts. */
function bytesOf(state: State): number {
  const { key } = STATE_BYTES;
  switch (state.kind) {
    case 'last-n':
      return key + STATE_BYTES.lastNBase + state.outcomes.length * STATE_BYTES.lastNEntry;
    case 'distinct':
      return key + state.values.size * STATE_BYTES.distinctEntry;
    case 'seen':
      return state.filters.reduce(
        (sum: number, filter) =>
          sum +
          (filter.size / 8 > SEEN_SEGMENT_BYTES
            ? filter.segments.size * STATE_BYTES.seenSegment
            : filter.segments.size * seenFilterStateBytes(filter.bytes)),
        key,
      );
    case 'claim':
      return key;
    case 'window':
      return 2 * key + state.entries.length * STATE_BYTES.logEntry;
    case 'hll':
      return 2 * HLL_FIXED_BYTES + state.current.registerBytes + state.union.registerBytes;
  }
}

export class MemoryEventStore implements EventStore {
  private readonly clock: Clock;
  private readonly hasher: ValueHasher;
  private readonly maxSubjects: number;
  private readonly maxBytes: number;
  private readonly states = new Map<string, State>();
  private totalBytes = 0;
  /** States the call in progress used, counted again when it ends. */
  private readonly touched: State[] = [];

  constructor(options: MemoryEventStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.hasher = new ValueHasher(options.keySecret);
    this.maxSubjects = options.maxSubjects ?? 100_000;
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    if (!(this.maxBytes > 0)) throw new RangeError('maxBytes must be positive');
  }

  /** Subjects with state. */
  get size(): number {
    return this.states.size;
  }

  /** Bytes of state held, as counted (see the module's header). */
  get bytes(): number {
    return this.totalBytes;
  }

  async apply(ops: readonly EventOp[], now?: number): Promise<EventResult[]> {
    const t = now ?? this.clock.now();
    const results = ops.map((op) => this.applyOne(op, t, undefined));
    this.account();
    return results;
  }

  readonly decide = async (check: CheckOps, now?: number): Promise<EventResult[]> => {
    const t = now ?? this.clock.now();
    const writes: (() => void)[] = [];
    let vetoed = check.vetoed === true;
    const results = check.ops.map((op, i) => {
      const result = this.applyOne(op, t, writes);
      if (result.fired && check.vetoes[i]) vetoed = true;
      return result;
    });
    if (!vetoed) for (const write of writes) write();
    this.account();
    return results;
  };

  /** Counts the states the call used again, then drops the oldest subjects while over `maxBytes`. */
  private account(): void {
    for (const state of this.touched) {
      if (state.bytes < 0) continue;
      const bytes = bytesOf(state);
      this.totalBytes += bytes - state.bytes;
      state.bytes = bytes;
    }
    this.touched.length = 0;
    while (this.totalBytes > this.maxBytes && this.states.size > 1) this.dropOldest();
  }

  private dropOldest(): void {
    const oldest = this.states.entries().next();
    if (oldest.done) return;
    this.states.delete(oldest.value[0]);
    this.totalBytes -= oldest.value[1].bytes;
    // Dropped: not counted again, should this call have used it.
    oldest.value[1].bytes = -1;
  }

  private state<K extends State['kind']>(subject: string, kind: K, create: () => Extract<State, { kind: K }>): Extract<State, { kind: K }> {
    const key = `${kind}\0${subject}`;
    let state = this.states.get(key) as Extract<State, { kind: K }> | undefined;
    if (!state) {
      if (this.states.size >= this.maxSubjects) this.dropOldest();
      state = create();
      this.states.set(key, state);
    }
    this.touched.push(state);
    return state;
  }

  /** `writes` given: a window op's record is queued there instead of made (see `decide`). */
  private applyOne(op: EventOp, t: number, writes: (() => void)[] | undefined): EventResult {
    if (op.kind === 'window') return this.window(op, t, writes);
    if (op.kind === 'claim') {
      const state = this.state(op.subject, 'claim', () => ({ kind: 'claim', until: Number.NEGATIVE_INFINITY, bytes: 0 }));
      const claimed = state.until > t;
      if (op.ttlMs === 0) state.until = Number.NEGATIVE_INFINITY;
      else if (!claimed) state.until = t + op.ttlMs;
      return { fired: claimed, count: claimed ? 1 : 0 };
    }
    if (op.kind === 'last-n') {
      const state = this.state(op.subject, 'last-n', () => ({ kind: 'last-n', outcomes: [], bytes: 0 }));
      if (op.push !== undefined) {
        state.outcomes.unshift(op.push);
        state.outcomes.length = Math.min(state.outcomes.length, op.n);
      }
      let count = 0;
      for (let i = 0; i < Math.min(op.n, state.outcomes.length); i++) if (state.outcomes[i] === op.outcome) count++;
      return { fired: count >= op.m, count };
    }
    if (op.kind === 'distinct' && op.limit > RISK_LIMITS.distinctExact) {
      const generation = Math.floor(t / op.windowMs);
      const state = this.state(op.subject, 'hll', () => ({
        kind: 'hll',
        generation,
        current: new HyperLogLog(),
        union: new HyperLogLog(),
        bytes: 0,
      }));
      if (state.generation !== generation) {
        // Turned over: the last generation is the old current one if it was the previous window.
        const last = state.generation === generation - 1 ? state.current : new HyperLogLog();
        state.generation = generation;
        state.current = new HyperLogLog();
        state.union = new HyperLogLog();
        state.union.merge(last);
      }
      const count = state.union.count();
      const fired = count >= op.limit;
      if (op.record && !fired) {
        const [low, high] = this.hasher.hll(op.value);
        state.current.add(low, high);
        state.union.add(low, high);
      }
      return fired ? { fired, count, retryAfterMs: (generation + 1) * op.windowMs - t } : { fired, count };
    }
    if (op.kind === 'distinct') {
      const state = this.state(op.subject, 'distinct', () => ({ kind: 'distinct', values: new Map(), bytes: 0 }));
      let oldest = Number.POSITIVE_INFINITY;
      for (const [member, at] of state.values) {
        if (at <= t - op.windowMs) state.values.delete(member);
        else if (at < oldest) oldest = at;
      }
      const member = this.hasher.member(op.value);
      const present = state.values.get(member);
      const count = state.values.size;
      const fired = present === undefined && count >= op.limit;
      if (op.record && !fired) state.values.set(member, Math.max(present ?? t, t));
      return fired ? { fired, count, retryAfterMs: Math.max(0, oldest + op.windowMs - t) } : { fired, count };
    }
    const state = this.state(op.subject, 'seen', () => ({ kind: 'seen', filters: [], bytes: 0 }));
    const generation = op.windowMs === undefined ? 0 : Math.floor(t / op.windowMs);
    state.filters = state.filters.filter((f) => f.size === op.bits && (f.generation === generation || f.generation === generation - 1));
    const { block, positions } = this.hasher.positions(op.value, op.bits, op.hashes);
    const { segment = 0, offset, bytes } = seenSegment(block, op.bits / 8);
    const has = (filter: Filter | undefined) => {
      const bits = filter?.segments.get(segment);
      return bits !== undefined && positions.every((p) => (bits[offset + (p >> 3)]! & (1 << (p & 7))) !== 0);
    };
    let current = state.filters.find((f) => f.generation === generation);
    const inCurrent = has(current);
    const seen = inCurrent || has(state.filters.find((f) => f.generation === generation - 1));
    if (op.record && !inCurrent) {
      if (!current) {
        current = { generation, size: op.bits, segments: new Map(), bytes: 0 };
        state.filters.push(current);
      }
      let bits = current.segments.get(segment);
      if (!bits) {
        bits = new Uint8Array(bytes);
        current.segments.set(segment, bits);
        current.bytes += bytes;
      }
      for (const p of positions) bits[offset + (p >> 3)]! |= 1 << (p & 7);
    }
    return { fired: !seen, count: seen ? 1 : 0 };
  }

  private window(op: Extract<EventOp, { kind: 'window' }>, t: number, writes: (() => void)[] | undefined): EventResult {
    const state = this.state(op.subject, 'window', () => ({ kind: 'window', entries: [], bannedUntil: 0, bytes: 0 }));
    const member = op.member === undefined ? '' : this.hasher.digest('r', op.member).subarray(0, 4).toString('hex');
    const counted = state.entries.filter((entry) => entry.at > t - op.windowMs && entry.at <= t);
    if (member !== '' && counted.some((entry) => entry.member === member)) return { fired: false, count: counted.length };
    const count = counted.length;
    if (state.bannedUntil > t) return { fired: true, banned: true, count: op.record ? 0 : count, retryAfterMs: state.bannedUntil - t };
    if (count >= op.limit) {
      const banMs = op.banMs ?? 0;
      const retryAfterMs = counted[count - op.limit]!.at + op.windowMs - t;
      // The breach is of admissions that stand (a vetoed check writes none), so it bans at once.
      if (banMs > 0 && op.record) state.bannedUntil = t + banMs;
      return { fired: true, count, retryAfterMs: Math.max(retryAfterMs, banMs) };
    }
    if (op.record) {
      const write = () => {
        state.entries = state.entries.filter((entry) => entry.at > t - op.windowMs);
        let at = state.entries.length;
        while (at > 0 && state.entries[at - 1]!.at > t) at--;
        state.entries.splice(at, 0, { at: t, member });
      };
      if (writes) writes.push(write);
      else write();
    }
    return { fired: false, count };
  }
}

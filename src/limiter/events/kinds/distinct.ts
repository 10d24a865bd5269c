/**
 * `distinct`: the values of dimension `of` seen with the subject within `(t − windowMs, t]` (a
 * value's time is the latest check or event that recorded it). Fires when the event's value is
 * not among them and they already number `limit`; a fired check does not add the value, so the set
 * never holds more than `limit` values and is exact (members are 48-bit hashes of the values: two
 * values of one subject collide with probability ≤ limit²/2^49). In Redis a sorted set (`:d`),
 * member → latest time, trimmed to the window when it records (TTL = window): op `'d'`.
 *
 * Above `RISK_LIMITS.distinctExact` (10,000) a HyperLogLog per window-long generation (⌊t / w⌋)
 * instead, of 16384 registers (standard error 0.81%): the count is the estimate of the union of
 * this generation and the last (the values of the last one to two windows); it fires when that
 * estimate is at least `limit`, for a known value too (an HLL cannot tell known from new), and
 * then adds nothing; `retryAfterMs` is the time until the generation turns over. In Redis
 * `:h:<generation>` keys: op `'h'`. Both ops: `../scripts/includes/distinct.lua`.
 */
import { type BaseRule, type EventResult, RISK_LIMITS } from '../base.js';
import { STATE_BYTES } from '../cost.js';
import { HyperLogLog } from '../hyperloglog.js';
import { int, type RiskKind, text } from './kind.js';

export interface DistinctRiskRule extends BaseRule {
  kind: 'distinct';
  of: string;
  windowMs: number;
  limit: number;
}

export interface DistinctOp {
  kind: 'distinct';
  subject: string;
  windowMs: number;
  limit: number;
  value: string;
  record: boolean;
}

/** The window's values in process: member → latest time. */
interface DistinctState {
  values: Map<string, number>;
  bytes: number;
}

/** Above the exact range: this generation's HLL, and the union with the last one's. */
interface HllState {
  generation: number;
  current: HyperLogLog;
  union: HyperLogLog;
  bytes: number;
}

/** An HLL's fixed part in process with its share of the subject: object, arrays, histogram (as cost.ts). */
const HLL_FIXED_BYTES = 4096;

const distinctBytes = (state: DistinctState) => STATE_BYTES.key + state.values.size * STATE_BYTES.distinctEntry;
const hllBytes = (state: HllState) => 2 * HLL_FIXED_BYTES + state.current.registerBytes + state.union.registerBytes;

const n = (count: number) => count.toLocaleString('en-US');

export const distinctKind: RiskKind<DistinctRiskRule, DistinctOp, 'DISTINCT_LIMIT'> = {
  name: 'distinct',
  parameters: ['of', 'windowMs', 'limit'],
  codes: ['DISTINCT_LIMIT'],
  recordsEvents: true,

  normalize: (rule, path, base) => ({
    ...base,
    kind: 'distinct',
    of: text(rule, 'of', path, RISK_LIMITS.nameLength),
    windowMs: int(rule, 'windowMs', path, 1, RISK_LIMITS.windowMs),
    limit: int(rule, 'limit', path, 1, RISK_LIMITS.distinctLimit),
  }),

  reads: (rule) => [rule.of],

  stateBytes(rule) {
    const { key, distinctEntry, hyperLogLog } = STATE_BYTES;
    return rule.limit > RISK_LIMITS.distinctExact
      ? { bytes: 2 * hyperLogLog, why: `2 HyperLogLogs × ${n(hyperLogLog)} B` }
      : { bytes: key + rule.limit * distinctEntry, why: `${n(rule.limit)} values × ${distinctEntry} B` };
  },

  op: (rule, { subject, dimensions, record }) => ({
    kind: 'distinct',
    subject,
    windowMs: rule.windowMs,
    limit: rule.limit,
    value: dimensions[rule.of]!,
    record,
  }),

  reason: (rule, result) => ({
    code: 'DISTINCT_LIMIT',
    count: result.count,
    limit: rule.limit,
    ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
  }),

  store: {
    memory(op, t, { state: stateOf, hasher }): EventResult {
      if (op.limit > RISK_LIMITS.distinctExact) {
        const generation = Math.floor(t / op.windowMs);
        const state = stateOf(
          op.subject,
          'hll',
          (): HllState => ({ generation, current: new HyperLogLog(), union: new HyperLogLog(), bytes: 0 }),
          hllBytes,
        );
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
          const [low, high] = hasher.hll(op.value);
          state.current.add(low, high);
          state.union.add(low, high);
        }
        return fired ? { fired, count, retryAfterMs: (generation + 1) * op.windowMs - t } : { fired, count };
      }
      const state = stateOf(op.subject, 'distinct', (): DistinctState => ({ values: new Map(), bytes: 0 }), distinctBytes);
      let oldest = Number.POSITIVE_INFINITY;
      for (const [member, at] of state.values) {
        if (at <= t - op.windowMs) state.values.delete(member);
        else if (at < oldest) oldest = at;
      }
      const member = hasher.member(op.value);
      const present = state.values.get(member);
      const count = state.values.size;
      const fired = present === undefined && count >= op.limit;
      if (op.record && !fired) state.values.set(member, Math.max(present ?? t, t));
      return fired ? { fired, count, retryAfterMs: Math.max(0, oldest + op.windowMs - t) } : { fired, count };
    },

    encode(op, { base, hasher, now }) {
      if (op.limit <= RISK_LIMITS.distinctExact) {
        return { keys: [`${base}d`], args: ['d', op.windowMs, op.limit, hasher.member(op.value), op.record ? 1 : 0], now };
      }
      // As for seen filters: the generation needs the time before the script runs.
      if (now === undefined) now = Date.now();
      const generation = Math.floor(now / op.windowMs);
      const retry = (generation + 1) * op.windowMs - now;
      return {
        keys: [`${base}h:${generation}`, `${base}h:${generation - 1}`],
        args: ['h', op.limit, hasher.member(op.value), op.record ? 1 : 0, 2 * op.windowMs, retry],
        now,
      };
    },

    result: ([fired, count, retry]) => (fired === 1 ? { fired: true, count, retryAfterMs: retry } : { fired: false, count }),
  },
};

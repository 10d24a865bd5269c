/**
 * `window`: the limiter's rule as it is ({@link Rule}): the subject's admitted checks, at most
 * `limit` within `windowMs`, banned for `banMs` by a breach. The engine gives it to the limiter
 * (`check-batch.lua`), or, when it decides a check in one call, a sliding-log window up to
 * `RISK_LIMITS.storeWindowLimit` to the event store as the op below (`'w'` of `risk-batch.lua`,
 * `../scripts/includes/window.lua`). Outcome events never write it: it counts checks.
 *
 * The op, in the limiter's order: `member` (a request id) already admitted within the window: not
 * fired, records nothing (a retry). Else a ban in force (its end > t): fired, `banned`,
 * `retryAfterMs` to its end, nothing counted when `record` (`count` 0; a look counts). Else the
 * subject's admissions in `(t − windowMs, t]` are counted; fires when they number `limit` already,
 * and then with `banMs > 0` bans until `t + banMs` when `record` (in `decide` whatever the check's
 * veto: the breach is of admissions that stand), `retryAfterMs` the later of the ban's end and the
 * window's. Records `t` when `record`, not fired, and (in `decide`) the check is not vetoed.
 */
import { ALGORITHMS, type Algorithm } from '../../types.js';
import { type BaseRule, type EventResult, RISK_LIMITS } from '../base.js';
import { STATE_BYTES } from '../cost.js';
import { int, oneOf, type RiskKind } from './kind.js';

export interface WindowRiskRule extends BaseRule {
  kind: 'window';
  windowMs: number;
  limit: number;
  banMs: number;
  algorithm: Algorithm;
}

/** A sliding-log window decided by the event store ({@link EventStore.decide}); see the module. */
export interface WindowOp {
  kind: 'window';
  subject: string;
  windowMs: number;
  limit: number;
  banMs?: number;
  record: boolean;
  member?: string;
}

/** A window's admissions in process, ascending by time; `member` '' when anonymous; `bannedUntil` 0: no ban. */
interface WindowState {
  entries: { at: number; member: string }[];
  bannedUntil: number;
  bytes: number;
}

const windowBytes = (state: WindowState) => 2 * STATE_BYTES.key + state.entries.length * STATE_BYTES.logEntry;

/** A count as written in messages: 1,440,160. */
const n = (count: number) => count.toLocaleString('en-US');

export const windowKind: RiskKind<WindowRiskRule, WindowOp, 'RATE_LIMITED' | 'BANNED'> = {
  name: 'window',
  parameters: ['windowMs', 'limit', 'banMs', 'algorithm'],
  codes: ['RATE_LIMITED', 'BANNED'],
  recordsEvents: false,

  normalize(rule, path, base) {
    return {
      ...base,
      kind: 'window',
      windowMs: int(rule, 'windowMs', path, 1, RISK_LIMITS.windowMs),
      limit: int(rule, 'limit', path, 1, 1_000_000_000),
      banMs: int(rule, 'banMs', path, 0, RISK_LIMITS.windowMs, 0),
      algorithm: oneOf<Algorithm>(rule, 'algorithm', path, ALGORITHMS, 'sliding-log'),
    };
  },

  reads: () => [],

  stateBytes(rule) {
    const { key, logEntry, counters } = STATE_BYTES;
    // With a request id (every recorded risk check has one) the limiter logs ids too, and a
    // counter algorithm admits at most 2 × limit within one window (a fixed window's edge).
    return rule.algorithm === 'sliding-log'
      ? { bytes: 2 * key + rule.limit * logEntry, why: `a log of ${n(rule.limit)} entries × ${logEntry} B and a ban` }
      : {
          bytes: 3 * key + counters + 2 * rule.limit * logEntry,
          why: `counters, a log of request ids of up to ${n(2 * rule.limit)} entries × ${logEntry} B and a ban`,
        };
  },

  op: (rule, { subject, record, requestId }) => ({
    kind: 'window',
    subject,
    windowMs: rule.windowMs,
    limit: rule.limit,
    banMs: rule.banMs,
    record,
    ...(requestId === undefined ? {} : { member: requestId }),
  }),

  reason(rule, result, record) {
    // As the limiter answers: a ban in force decides a check without counting; a look counts.
    if (result.banned) {
      return { code: 'BANNED', ...(record ? {} : { count: result.count }), limit: rule.limit, retryAfterMs: result.retryAfterMs! };
    }
    return {
      code: 'RATE_LIMITED',
      count: result.count,
      limit: rule.limit,
      ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
    };
  },

  store: {
    memory(op, t, { state: stateOf, hasher, writes }): EventResult {
      const state = stateOf(op.subject, 'window', (): WindowState => ({ entries: [], bannedUntil: 0, bytes: 0 }), windowBytes);
      const member = op.member === undefined ? '' : hasher.digest('r', op.member).subarray(0, 4).toString('hex');
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
    },

    encode(op, { base, hasher, now }) {
      const member = op.member === undefined ? '' : hasher.digest('r', op.member).subarray(0, 4);
      return { keys: [`${base}w`, `${base}wb`], args: ['w', op.windowMs, op.limit, member, op.record ? 1 : 0, op.banMs ?? 0], now };
    },

    result: ([fired, count, retry]) =>
      fired === 2
        ? { fired: true, banned: true, count, retryAfterMs: retry }
        : fired === 1
          ? { fired: true, count, retryAfterMs: retry }
          : { fired: false, count },
  },
};

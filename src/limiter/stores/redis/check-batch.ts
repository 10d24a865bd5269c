/**
 * The wire format of scripts/check-batch.lua: many checks and peeks (of subjects on one node)
 * encoded into one EVALSHA, and its flat reply decoded into one Decision per item.
 * Each distinct rule set is sent once per call and referenced by number, so the per-decision
 * part is usually one short number and four keys.
 */
import type { Algorithm, Decision, DecisionCode, NormalizedRule, StoreCheck } from '../../types.js';
import type { SubjectKeys } from './keys.js';

/**
 * What a queued decision asks of check-batch.lua: `check` decides and records
 * (`LimiterStore.check`), `peek` looks (`LimiterStore.peek`), `ban-if-hit` looks and bans when
 * hit (`LimiterStore.banIfHit`).
 */
export type DecisionMode = 'check' | 'peek' | 'ban-if-hit';

/** One queued check or peek: the store's request as its caller passed it, and what the store derived from it. */
export interface PendingDecision {
  /** The request: a `check`'s, or a peek's (a `StorePeek`: a `requestId` or `countAt` it carries is never read). */
  readonly request: StoreCheck;
  readonly mode: DecisionMode;
  /** The subject's keys. */
  readonly keys: SubjectKeys;
  /** A `check`'s `RedisKeys.requestMember(requestId)`, its log member; '' without a request id, and for a peek. */
  readonly requestMember: string;
  /** The decision time: the request's `now`, else the store's clock; undefined: Redis TIME. */
  readonly now: number | undefined;
  resolve(decision: Decision): void;
  reject(error: unknown): void;
}

const ALGORITHM_CODES: Readonly<Record<Algorithm, number>> = {
  'sliding-log': 1,
  'sliding-counter': 2,
  'fixed-window': 3,
  'token-bucket': 4,
};

/** Reply codes of check-batch.lua; 3 is an OK for a repeated request id, 4 an OK deferred. */
const DECISION_CODES: readonly DecisionCode[] = ['OK', 'BANNED', 'RATE_LIMITED', 'OK', 'OK'];

/** Rule arrays are long-lived (the Limiter caches normalised sets), so their encoding is too. */
const encodedRules = new WeakMap<readonly NormalizedRule[], number[]>();

/** `n, then n × (algorithm, windowMs, limit, banMs)`: the rule-set format of the scripts. */
export function encodeRules(rules: readonly NormalizedRule[]): number[] {
  let encoded = encodedRules.get(rules);
  if (encoded === undefined) {
    encoded = [rules.length];
    for (const rule of rules) encoded.push(ALGORITHM_CODES[rule.algorithm], rule.windowMs, rule.limit, rule.banMs);
    encodedRules.set(rules, encoded);
  }
  return encoded;
}

/**
 * Keys then ARGV of one check-batch call; `perNode`: the keys go in ARGV behind one routing key (the
 * script's per-node form, for items of several slots of one cluster node).
 */
export function encodeBatch(
  items: readonly PendingDecision[],
  minTtlMs: number,
  packedLogMax: number,
  perNode: boolean,
): { numKeys: number; args: (string | number)[] } {
  const args: (string | number)[] = perNode ? [items[0]!.keys.packed, 5 * items.length] : [];
  const setNumbers = new Map<readonly NormalizedRule[], number>();
  const sets: number[][] = [];
  for (const item of items) {
    args.push(item.keys.log, item.keys.ban, item.keys.counters, item.keys.scheduled, item.keys.packed);
    const rules = item.request.rules;
    if (!setNumbers.has(rules)) {
      sets.push(encodeRules(rules));
      setNumbers.set(rules, sets.length);
    }
  }
  args.push(minTtlMs, packedLogMax, sets.length);
  for (const set of sets) for (const value of set) args.push(value);
  for (const item of items) {
    const { mode, requestMember, now } = item;
    const countAt = mode === 'check' ? item.request.countAt : undefined;
    const deferUntil = mode === 'check' ? item.request.deferUntil : undefined;
    // A peek has no countAt: its bit 4 says the peek bans when hit.
    const header =
      16 * setNumbers.get(item.request.rules)! +
      (deferUntil === undefined ? 0 : 8) +
      (countAt === undefined && mode !== 'ban-if-hit' ? 0 : 4) +
      (requestMember === '' ? 0 : 2) +
      (now === undefined ? 0 : 1);
    args.push(mode === 'check' ? header : -header);
    if (requestMember !== '') args.push(requestMember);
    if (now !== undefined) args.push(now);
    if (countAt !== undefined) args.push(countAt);
    if (deferUntil !== undefined) args.push(deferUntil);
  }
  return { numKeys: perNode ? 1 : 5 * items.length, args };
}

/** One Decision per item from the flat reply (layout in check-batch.lua); throws on a malformed reply. */
export function decodeBatch(items: readonly PendingDecision[], reply: unknown): Decision[] {
  if (!Array.isArray(reply)) throw new TypeError('check-batch returned a non-array');
  const decisions: Decision[] = [];
  let p = 0;
  for (const item of items) {
    const code = DECISION_CODES[reply[p] as number];
    // A check answered BANNED carries no counts (the ban decided without counting); a peek and a deferral do.
    const n = code === 'BANNED' && item.mode === 'check' && item.request.deferUntil === undefined ? 0 : item.request.rules.length;
    if (code === undefined || reply.length < p + 4 + n) throw new TypeError('check-batch returned a malformed reply');
    const retryAfterMs = reply[p + 2] as number;
    const at = reply[p + 3] as number;
    const counts = reply.slice(p + 4, p + 4 + n) as number[];
    decisions.push(
      code === 'RATE_LIMITED'
        ? { allowed: false, code, rule: reply[p + 1] as number, retryAfterMs, counts, at }
        : reply[p] === 4
          ? { allowed: true, code, retryAfterMs: 0, counts, at, deferredTo: at + retryAfterMs }
          : { allowed: code === 'OK', code, retryAfterMs, counts, at },
    );
    p += 4 + n;
  }
  return decisions;
}

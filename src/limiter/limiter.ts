import { BanCache, type BanCacheOptions } from './cache/ban-cache.js';
import type { TokenLeases } from './lease/token-leases.js';
import {
  ALGORITHMS,
  type CheckRequest,
  type Decision,
  type LimiterStore,
  type NormalizedRule,
  type PeekRequest,
  type Rule,
  type StoreCheck,
  type StorePeek,
  type StoreUndo,
  type UndoRequest,
} from './types.js';

export interface LimiterOptions {
  /** Where counters live: `new MemoryStore()` or `new RedisStore({ client })`. */
  store: LimiterStore;
  /**
   * Answer checks of subjects banned in the store in process until the ban ends (or `maxTtlMs`),
   * without a store call; `true` for the defaults. See {@link BanCache} and docs/limiter.md.
   */
  banCache?: boolean | BanCacheOptions;
  /** Spend rules with `lease: true` from leased blocks (`new TokenLeases({ client })`); closed by `close()`. */
  leases?: TokenLeases;
}

/** Longest window or ban accepted: 400 days, so every time stays an exact integer in a double. */
const MAX_DURATION_MS = 400 * 24 * 3_600_000;

function isPositiveInt(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= max;
}

/** Validates one rule and fills its defaults; throws RangeError naming the bad field. */
export function normalizeRule(rule: Rule, index = 0): NormalizedRule {
  if (rule === null || typeof rule !== 'object') throw new RangeError(`rules[${index}] must be an object`);
  if (!isPositiveInt(rule.windowMs, MAX_DURATION_MS)) {
    throw new RangeError(`rules[${index}].windowMs must be an integer in [1, ${MAX_DURATION_MS}]`);
  }
  if (!isPositiveInt(rule.limit, 1_000_000_000)) throw new RangeError(`rules[${index}].limit must be an integer in [1, 1e9]`);
  const banMs = rule.banMs ?? 0;
  if (banMs !== 0 && !isPositiveInt(banMs, MAX_DURATION_MS)) {
    throw new RangeError(`rules[${index}].banMs must be 0 or an integer in [1, ${MAX_DURATION_MS}]`);
  }
  const algorithm = rule.algorithm ?? 'sliding-log';
  if (!ALGORITHMS.includes(algorithm)) throw new RangeError(`rules[${index}].algorithm must be one of ${ALGORITHMS.join(', ')}`);
  if (rule.lease !== undefined && typeof rule.lease !== 'boolean') throw new RangeError(`rules[${index}].lease must be a boolean`);
  if (rule.lease && (algorithm !== 'token-bucket' || banMs !== 0)) {
    throw new RangeError(`rules[${index}].lease needs a token-bucket rule without a ban`);
  }
  return rule.lease
    ? { windowMs: rule.windowMs, limit: rule.limit, banMs, algorithm, lease: true }
    : { windowMs: rule.windowMs, limit: rule.limit, banMs, algorithm };
}

/** Rule arrays are usually long-lived config objects: normalise each once (so treat a rule array as immutable once passed). */
const normalizedRules = new WeakMap<readonly Rule[], readonly NormalizedRule[]>();

/** Validates a rule array (once per array object) and returns it normalised; throws RangeError. */
export function normalizeRules(rules: readonly Rule[]): readonly NormalizedRule[] {
  const cached = normalizedRules.get(rules);
  if (cached) return cached;
  if (!Array.isArray(rules) || rules.length === 0) throw new RangeError('rules must be a non-empty array');
  if (rules.length > 16) throw new RangeError('at most 16 rules per check');
  const result = Object.freeze(rules.map((rule, index) => normalizeRule(rule, index)));
  const leased = result.filter((rule) => rule.lease).length;
  if (leased !== 0 && leased !== result.length) throw new RangeError('either every rule of a set has lease: true or none');
  normalizedRules.set(rules, result);
  return result;
}

/**
 * Throws TypeError/RangeError for a malformed check request; returns its rules normalised. Shared
 * by every limiter front (Limiter, DegradingLimiter), so a store failure is never mistaken for bad
 * arguments, or the reverse.
 */
export function validateCheckRequest(request: CheckRequest): readonly NormalizedRule[] {
  if (request === null || typeof request !== 'object') throw new TypeError('request must be an object');
  const rules = normalizeRules(request.rules);
  checkSubject(request.subject);
  checkNow(request.now);
  if (request.countAt !== undefined) checkNow(request.countAt, 'countAt');
  if (request.requestId !== undefined) checkRequestId(request.requestId);
  if (request.deferUntil !== undefined) {
    checkNow(request.deferUntil, 'deferUntil');
    if (request.requestId === undefined) throw new TypeError('deferUntil needs a requestId');
  }
  return rules;
}

/**
 * The frequency limiter: validates requests and asks its store for atomic decisions.
 *
 * ```ts
 * const limiter = new Limiter({ store: new MemoryStore() });
 * const d = await limiter.check({ subject: 'acme:sms:+8613800000000', rules: [{ windowMs: 60_000, limit: 3, banMs: 600_000 }] });
 * if (!d.allowed) console.log(d.code, d.retryAfterMs);
 * ```
 * A denial is a resolved {@link Decision}; a rejection means invalid arguments or a failed store.
 */
export class Limiter {
  readonly store: LimiterStore;
  /** The ban cache, when enabled (`banCache` option). */
  readonly banCache: BanCache | undefined;
  /** The token leases, when given (`leases` option). */
  readonly leases: TokenLeases | undefined;

  constructor(options: LimiterOptions) {
    if (!options?.store) throw new TypeError('Limiter needs a store');
    this.store = options.store;
    const { banCache } = options;
    this.banCache = banCache ? new BanCache(banCache === true ? {} : banCache) : undefined;
    this.leases = options.leases;
  }

  /** Decide one attempt and record it when allowed (semantics: src/limiter/types.ts). */
  check(request: CheckRequest): Promise<Decision> {
    try {
      const rules = validateCheckRequest(request);
      if (rules[0]!.lease && this.leases) return this.leases.check(storeCheck(request, rules));
      const cache = this.banCache;
      // A deferred check waits out a ban instead of being refused by it: the store decides.
      if (cache === undefined || request.deferUntil !== undefined) return this.store.check(storeCheck(request, rules));
      const cached = cache.lookup(request);
      if (cached) return Promise.resolve(cached);
      const sentAt = cache.now();
      return this.store.check(storeCheck(request, rules)).then((decision) => {
        cache.learn(request.subject, decision, sentAt);
        return decision;
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The decision a check would make now, without recording or banning. Never answered by the ban
   * cache; a leased rule set is refused (its state is the leases, which a peek cannot read).
   */
  async peek(request: PeekRequest): Promise<Decision> {
    const look = validatePeekRequest(request);
    if (look.rules[0]!.lease && this.leases) throw new RangeError('peek of a leased rule set is not supported');
    return this.store.peek(look);
  }

  /**
   * A {@link peek} that bans as a check would: when no ban is in force and a rule with `banMs > 0`
   * is hit by the admissions standing now, the subject is banned until `now + max(banMs of the
   * hit rules)`; nothing is recorded. For a ban deferred past a check made with `banMs: 0`, so
   * that admissions taken back meanwhile never count towards it (the risk engine's window rules).
   */
  async banIfHit(request: PeekRequest): Promise<Decision> {
    const look = validatePeekRequest(request);
    if (look.rules[0]!.lease && this.leases) throw new RangeError('banIfHit of a leased rule set is not supported');
    return this.store.banIfHit(look);
  }

  /**
   * Drops cached bans (see `banCache`): of `subject`, or every one when omitted. Call it when a ban
   * was lifted or a subject reset elsewhere, or its rules changed (sluice: from its change bus).
   */
  invalidate(subject?: string): void {
    if (subject === undefined) this.banCache?.clear();
    else this.banCache?.invalidate(subject);
  }

  /** Drops the cached bans of one owner's subjects (the ban cache's `ownerOf`; all without it). */
  invalidateOwner(owner: string): void {
    this.banCache?.invalidateOwner(owner);
  }

  /** Gives leased tokens back and closes the store (a store never closes a client it was given). */
  async close(): Promise<void> {
    await this.leases?.close();
    await this.store.close?.();
  }

  /**
   * Take back an admitted attempt, e.g. because a later admission step rejected the request. Pass
   * the request id it was checked with; without one (an attempt checked without an id) the counters
   * are taken back at `at` unconditionally, so undo each such attempt at most once.
   */
  async undo(request: UndoRequest): Promise<void> {
    const rules = normalizeRules(request.rules);
    checkSubject(request.subject);
    if (request.requestId !== undefined) checkRequestId(request.requestId);
    if (request.at === undefined) throw new TypeError('at must be the Decision.at of the admitted attempt');
    checkNow(request.at);
    const undo: StoreUndo = { subject: request.subject, rules, requestId: request.requestId, at: request.at };
    if (rules[0]!.lease && this.leases) return this.leases.undo(undo);
    return this.store.undo(undo);
  }

  /** Forget a subject's history and ban. */
  async reset(subject: string): Promise<void> {
    checkSubject(subject);
    this.banCache?.invalidate(subject);
    await this.store.reset(subject);
    this.banCache?.invalidate(subject);
  }

  /** Ban a subject for `ms` milliseconds from `now` (default: the store's clock). */
  async ban(subject: string, ms: number, now?: number): Promise<void> {
    checkSubject(subject);
    if (!isPositiveInt(ms, MAX_DURATION_MS)) throw new RangeError(`ban ms must be an integer in [1, ${MAX_DURATION_MS}]`);
    checkNow(now);
    await this.store.ban(subject, ms, now);
    this.banCache?.invalidate(subject);
  }

  /**
   * Lift a subject's ban; resolves whether a ban record was still stored (not yet cleaned up): true
   * for a ban in force on the store's clock, and on RedisStore also for an ended ban whose key lives
   * on (at least `minTtlMs`). Cleanup follows the store's clock, not explicit `now` values.
   */
  async unban(subject: string): Promise<boolean> {
    checkSubject(subject);
    this.banCache?.invalidate(subject);
    const lifted = await this.store.unban(subject);
    // Again: a check in flight during the unban may have learnt the ban meanwhile.
    this.banCache?.invalidate(subject);
    return lifted;
  }
}

/**
 * The store's request: `request` with its rules normalized. Always this one shape, whatever else
 * the caller's object holds, so the stores' reads of it stay monomorphic.
 */
function storeCheck(request: CheckRequest, rules: readonly NormalizedRule[]): StoreCheck {
  return {
    subject: request.subject,
    rules,
    requestId: request.requestId,
    now: request.now,
    countAt: request.countAt,
    deferUntil: request.deferUntil,
  };
}

/** Throws TypeError/RangeError for a malformed peek request; returns the store's request. */
function validatePeekRequest(request: PeekRequest): StorePeek {
  if (request === null || typeof request !== 'object') throw new TypeError('request must be an object');
  const rules = normalizeRules(request.rules);
  checkSubject(request.subject);
  checkNow(request.now);
  return { subject: request.subject, rules, now: request.now };
}

function checkSubject(subject: unknown): asserts subject is string {
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 512) {
    throw new TypeError('subject must be a string of 1 to 512 characters');
  }
}

/** The largest Date; with 400-day windows and bans every sum stays below 2^53, so stays exact. */
const MAX_TIME_MS = 8_640_000_000_000_000;

function checkNow(now: unknown, name = 'now'): void {
  if (now !== undefined && !(typeof now === 'number' && Number.isInteger(now) && now >= 0 && now <= MAX_TIME_MS)) {
    throw new TypeError(`${name} must be a non-negative integer (epoch ms)`);
  }
}

function checkRequestId(requestId: unknown): void {
  if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > 512) {
    throw new TypeError('requestId must be a string of 1 to 512 characters');
  }
}

/**
 * What a {@link DegradingLimiter} answers when the primary store cannot: the fallback policy, its
 * validation and the rule sets it derives. See docs/degradation.md for how to choose.
 */
import { normalizeRule } from '../limiter.js';
import type { Decision, Rule } from '../types.js';

/**
 * - `local`: the same rules counted in this process (optionally divided by the instance count).
 * - `static`: `staticRules` (usually looser) counted in this process.
 * - `allow`: every attempt admitted, nothing counted.
 * - `deny`: every attempt rejected `RATE_LIMITED` (no rule named).
 */
export const FALLBACK_MODES = ['local', 'static', 'allow', 'deny'] as const;
export type FallbackMode = (typeof FALLBACK_MODES)[number];

/** How to decide while degraded. Treat a policy object as immutable once passed (it is validated once). */
export interface FallbackPolicy {
  mode: FallbackMode;
  /** The rules of `static` mode (required there, ignored otherwise). */
  staticRules?: readonly Rule[];
  /**
   * `local` mode: each rule's limit is divided by this (the number of instances sharing the
   * traffic), rounded up, at least 1; so the instances together admit about the global limit.
   * Default 1.
   */
  divideBy?: number;
  /**
   * Under degradation only this fraction (0..1] of attempts is decided by `mode`; the others are
   * admitted as in `allow` mode (cheap, nothing counted). Default 1: every attempt.
   */
  sampleRate?: number;
}

/** A decision, marked with the fallback mode that made it when the primary store did not. */
export type DegradedDecision = Decision & {
  /** Absent: decided by the primary store. For `static`, `rule` indexes `staticRules`. */
  degraded?: FallbackMode;
};

const validated = new WeakSet<FallbackPolicy>();

/** Throws TypeError/RangeError naming the bad field of a policy; cheap after the first call per object. */
export function validateFallbackPolicy(policy: FallbackPolicy): void {
  if (validated.has(policy)) return;
  if (policy === null || typeof policy !== 'object') throw new TypeError('fallback policy must be an object');
  if (!FALLBACK_MODES.includes(policy.mode)) throw new RangeError(`fallback mode must be one of ${FALLBACK_MODES.join(', ')}`);
  if (policy.divideBy !== undefined && !(Number.isInteger(policy.divideBy) && policy.divideBy >= 1)) {
    throw new RangeError('divideBy must be an integer ≥ 1');
  }
  if (policy.sampleRate !== undefined && !(typeof policy.sampleRate === 'number' && policy.sampleRate > 0 && policy.sampleRate <= 1)) {
    throw new RangeError('sampleRate must be in (0, 1]');
  }
  if (policy.mode === 'static') {
    if (!Array.isArray(policy.staticRules) || policy.staticRules.length === 0) {
      throw new RangeError('static fallback needs non-empty staticRules');
    }
    for (const [index, rule] of policy.staticRules.entries()) normalizeRule(rule, index);
  }
  validated.add(policy);
}

const divided = new WeakMap<readonly Rule[], Map<number, readonly Rule[]>>();

/**
 * `rules` with every limit divided by `divideBy` (rounded up, at least 1). The same input array
 * and divisor give the same output array, so the limiter's per-array normalisation cache works.
 */
export function divideRules(rules: readonly Rule[], divideBy: number | undefined): readonly Rule[] {
  if (divideBy === undefined || divideBy === 1) return rules;
  let byDivisor = divided.get(rules);
  if (!byDivisor) {
    byDivisor = new Map();
    divided.set(rules, byDivisor);
  }
  let result = byDivisor.get(divideBy);
  if (!result) {
    result = Object.freeze(rules.map((rule) => ({ ...rule, limit: Math.max(1, Math.ceil(rule.limit / divideBy)) })));
    byDivisor.set(divideBy, result);
  }
  return result;
}

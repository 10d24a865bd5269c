/**
 * Validation of risk rule sets: every bound of {@link RISK_LIMITS}, defaults filled in (each
 * kind's parameters by its descriptor, ./kinds/), and the bound of their state. A bad rule throws
 * {@link RiskRuleError} naming its field (`rules[2].m`), so an API can answer 400 with it.
 */
import { type Dimensions, RISK_EFFECTS, RISK_LIMITS, RISK_MODES } from './base.js';
import { isRiskRuleKind, kindOf, RISK_KINDS, RISK_RULE_KINDS, type RiskRule } from './kinds/index.js';
import { oneOf, RiskRuleError, type RuleInput, text } from './kinds/kind.js';

export { RiskRuleError } from './kinds/kind.js';
export { seenFilterSize } from './kinds/seen.js';

/** One rule in the library's units (milliseconds), validated; `index` names it in errors. */
export function normalizeRiskRule(input: unknown, index: number): RiskRule {
  const path = `rules[${index}]`;
  if (input === null || typeof input !== 'object') throw new RiskRuleError(path, 'must be an object');
  const rule = input as RuleInput;
  const name = text(rule, 'name', path, RISK_LIMITS.nameLength);
  const kind = rule.kind;
  if (!isRiskRuleKind(kind)) throw new RiskRuleError(`${path}.kind`, `must be one of ${RISK_RULE_KINDS.join(', ')}`);
  const key = rule.key;
  if (!Array.isArray(key) || key.length === 0 || key.length > RISK_LIMITS.keyDimensions) {
    throw new RiskRuleError(`${path}.key`, `must list 1 to ${RISK_LIMITS.keyDimensions} dimensions`);
  }
  key.forEach((dimension, i) => {
    if (typeof dimension !== 'string' || dimension.length === 0 || dimension.length > RISK_LIMITS.nameLength) {
      throw new RiskRuleError(`${path}.key[${i}]`, `must be a dimension name of 1 to ${RISK_LIMITS.nameLength} characters`);
    }
  });
  if (new Set(key).size !== key.length) throw new RiskRuleError(`${path}.key`, 'names a dimension twice');
  const base = {
    name,
    key: key as string[],
    mode: oneOf(rule, 'mode', path, RISK_MODES, 'enforce'),
    effect: oneOf(rule, 'effect', path, RISK_EFFECTS, 'deny'),
  };
  return RISK_KINDS[kind].normalize(rule, path, base);
}

/** A whole set: 1 to 32 rules with unique names. */
export function normalizeRiskRules(input: unknown): RiskRule[] {
  if (!Array.isArray(input) || input.length === 0 || input.length > RISK_LIMITS.rules) {
    throw new RiskRuleError('rules', `must hold 1 to ${RISK_LIMITS.rules} rules`);
  }
  const rules = input.map(normalizeRiskRule);
  const names = new Set<string>();
  rules.forEach((rule, index) => {
    if (names.has(rule.name)) throw new RiskRuleError(`rules[${index}].name`, `"${rule.name}" is used by an earlier rule`);
    names.add(rule.name);
  });
  return rules;
}

/**
 * Checks an event's dimensions against the bounds and the rules: at most 16, values of at most
 * 256 characters, and every dimension a rule names (its key, its `of`) present. Pass the rules
 * the event reads or writes: a check's whole set, an outcome's event rules.
 */
export function validateDimensions(rules: readonly RiskRule[], dimensions: Dimensions): void {
  if (dimensions === null || typeof dimensions !== 'object') throw new RiskRuleError('dimensions', 'must be an object');
  const names = Object.keys(dimensions);
  if (names.length > RISK_LIMITS.dimensions)
    throw new RiskRuleError('dimensions', `must hold at most ${RISK_LIMITS.dimensions} dimensions`);
  for (const name of names) {
    const value = dimensions[name];
    if (typeof value !== 'string' || value.length > RISK_LIMITS.valueLength) {
      throw new RiskRuleError(`dimensions.${name}`, `must be a string of at most ${RISK_LIMITS.valueLength} characters`);
    }
  }
  for (const rule of rules) {
    for (const name of ruleDimensions(rule)) {
      if (!Object.hasOwn(dimensions, name)) throw new RiskRuleError(`dimensions.${name}`, `is required by rule "${rule.name}"`);
    }
  }
}

/** The dimensions a rule reads: its key, and its `of`. */
export const ruleDimensions = (rule: RiskRule): readonly string[] => [...rule.key, ...kindOf(rule).reads(rule)];

/**
 * The event rules an outcome feeds: those whose dimensions it carries, and the names of those it
 * cannot feed (`skipped`). Checks the dimensions' bounds; throws a {@link RiskRuleError} when it
 * feeds none, naming what each rule needs, so an event that records nothing is never silent.
 */
export function eventRulesFed<R extends RiskRule>(rules: readonly R[], dimensions: Dimensions): { fed: R[]; skipped: string[] } {
  validateDimensions([], dimensions);
  const fed: R[] = [];
  const skipped: string[] = [];
  for (const rule of rules) {
    if (ruleDimensions(rule).every((name) => Object.hasOwn(dimensions, name))) fed.push(rule);
    else skipped.push(rule.name);
  }
  if (fed.length === 0) {
    const needs = rules.map((rule) => `"${rule.name}" needs ${ruleDimensions(rule).join(', ')}`);
    throw new RiskRuleError(
      'dimensions',
      rules.length === 0
        ? 'feeds no rule: the set has no last-n, distinct or seen rule (window rules count checks, not events)'
        : `feeds no rule of the set: ${needs.join('; ')}`,
    );
  }
  return { fed, skipped };
}

/** A count as written in messages: 1,440,160. */
const n = (count: number) => count.toLocaleString('en-US');

/** A rule's worst-case bytes for one subject (./cost.ts), and how they add up (for messages and docs). */
export function riskRuleStateBytes(rule: RiskRule): { bytes: number; why: string } {
  return kindOf(rule).stateBytes(rule);
}

/**
 * Throws a {@link RiskRuleError} when the rules together may keep more than `maxBytes` for one
 * event's values (the sum of each rule's bytes for one subject): naming the rule (`rules[2]`)
 * when it alone exceeds the cap, else the set (`rules`), with the computed bytes, how they add
 * up, and the cap (`capName` names it, e.g. a setting).
 */
export function checkRiskStateBytes(rules: readonly RiskRule[], maxBytes: number, capName = 'the cap'): void {
  const costs = rules.map(riskRuleStateBytes);
  const total = costs.reduce((sum, cost) => sum + cost.bytes, 0);
  if (total <= maxBytes) return;
  const cap = `above ${capName} of ${n(maxBytes)} bytes per event`;
  const largest = costs.reduce((best, cost, i) => (cost.bytes > costs[best]!.bytes ? i : best), 0);
  const cost = costs[largest]!;
  if (cost.bytes > maxBytes) {
    throw new RiskRuleError(`rules[${largest}]`, `keeps up to ${n(cost.bytes)} bytes per subject (${cost.why}), ${cap}`);
  }
  const parts = costs.map((c, i) => `"${rules[i]!.name}" ${n(c.bytes)}`).join(', ');
  throw new RiskRuleError('rules', `keep up to ${n(total)} bytes for one event's values (${parts}), ${cap}`);
}

/**
 * Validation of risk rule sets: every bound of {@link RISK_LIMITS}, defaults filled in. A bad
 * rule throws {@link RiskRuleError} naming its field (`rules[2].m`), so an API can answer 400 with it.
 */
import { ALGORITHMS, type Algorithm } from '../types.js';
import { bloomSize } from './hashing.js';
import { type Dimensions, RISK_EFFECTS, RISK_LIMITS, RISK_MODES, RISK_RULE_KINDS, type RiskRule } from './types.js';

/** A rule set or an event that breaks a bound; `field` is its path (`rules[1].windowMs`, `dimensions.phone`). */
export class RiskRuleError extends RangeError {
  override readonly name = 'RiskRuleError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

type Input = Record<string, unknown>;

const isInt = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

function int(rule: Input, field: string, path: string, min: number, max: number, fallback?: number): number {
  const value = rule[field] ?? fallback;
  if (!isInt(value, min, max)) throw new RiskRuleError(`${path}.${field}`, `must be an integer in [${min}, ${max}]`);
  return value;
}

function text(rule: Input, field: string, path: string, maxLength: number): string {
  const value = rule[field];
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
    throw new RiskRuleError(`${path}.${field}`, `must be a string of 1 to ${maxLength} characters`);
  }
  return value;
}

function oneOf<T extends string>(rule: Input, field: string, path: string, values: readonly T[], fallback: T): T {
  const value = rule[field] ?? fallback;
  if (!values.includes(value as T)) throw new RiskRuleError(`${path}.${field}`, `must be one of ${values.join(', ')}`);
  return value as T;
}

/** One rule in the library's units (milliseconds), validated; `index` names it in errors. */
export function normalizeRiskRule(input: unknown, index: number): RiskRule {
  const path = `rules[${index}]`;
  if (input === null || typeof input !== 'object') throw new RiskRuleError(path, 'must be an object');
  const rule = input as Input;
  const name = text(rule, 'name', path, RISK_LIMITS.nameLength);
  const kind = rule.kind;
  if (!RISK_RULE_KINDS.includes(kind as never)) throw new RiskRuleError(`${path}.kind`, `must be one of ${RISK_RULE_KINDS.join(', ')}`);
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
  const maxWindow = RISK_LIMITS.windowMs;
  switch (kind) {
    case 'window':
      return {
        ...base,
        kind,
        windowMs: int(rule, 'windowMs', path, 1, maxWindow),
        limit: int(rule, 'limit', path, 1, 1_000_000_000),
        banMs: int(rule, 'banMs', path, 0, maxWindow, 0),
        algorithm: oneOf<Algorithm>(rule, 'algorithm', path, ALGORITHMS, 'sliding-log'),
      };
    case 'last-n': {
      const n = int(rule, 'n', path, 1, RISK_LIMITS.lastN);
      return { ...base, kind, n, m: int(rule, 'm', path, 1, n), outcome: text(rule, 'outcome', path, RISK_LIMITS.outcomeLength) };
    }
    case 'distinct':
      return {
        ...base,
        kind,
        of: text(rule, 'of', path, RISK_LIMITS.nameLength),
        windowMs: int(rule, 'windowMs', path, 1, maxWindow),
        limit: int(rule, 'limit', path, 1, RISK_LIMITS.distinctLimit),
      };
    default: {
      const falsePositiveRate = rule.falsePositiveRate ?? 0.001;
      if (typeof falsePositiveRate !== 'number' || !(falsePositiveRate >= 1e-9 && falsePositiveRate <= 0.5)) {
        throw new RiskRuleError(`${path}.falsePositiveRate`, 'must be a number in [1e-9, 0.5]');
      }
      return {
        ...base,
        kind: 'seen',
        of: text(rule, 'of', path, RISK_LIMITS.nameLength),
        ...(rule.windowMs === undefined ? {} : { windowMs: int(rule, 'windowMs', path, 1, maxWindow) }),
        capacity: int(rule, 'capacity', path, 1, RISK_LIMITS.seenCapacity, 1000),
        falsePositiveRate,
      };
    }
  }
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

/** The Bloom filter a `seen` rule uses. */
export const seenFilterSize = (rule: { capacity: number; falsePositiveRate: number }) => bloomSize(rule.capacity, rule.falsePositiveRate);

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
    const needed = rule.kind === 'distinct' || rule.kind === 'seen' ? [...rule.key, rule.of] : rule.key;
    for (const name of needed) {
      if (!Object.hasOwn(dimensions, name)) throw new RiskRuleError(`dimensions.${name}`, `is required by rule "${rule.name}"`);
    }
  }
}

/**
 * The table of risk rule kinds (src/limiter/events/kinds/index.ts) agrees with itself: each row
 * is named as its key, declares the parameters its validation fills, and has its op's piece of
 * risk-batch.lua. An example rule of every kind is asked for here (the record's type names every
 * kind), so a new kind is checked as it is added.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizeRiskRule, RISK_KINDS, RISK_RULE_KINDS, type RiskRuleKind } from '../../../src/limiter/index.js';
import { luaIncludes } from '../../../src/limiter/stores/redis/lua-source.js';

/** A rule of each kind giving every parameter. */
const EXAMPLES: Record<RiskRuleKind, Record<string, unknown>> = {
  window: { windowMs: 60_000, limit: 3, banMs: 600_000, algorithm: 'fixed-window' },
  'last-n': { n: 5, m: 3, outcome: 'failed' },
  distinct: { of: 'device', windowMs: 3_600_000, limit: 5 },
  seen: { of: 'device', windowMs: 86_400_000, capacity: 500, falsePositiveRate: 0.01 },
};

const scripts = new URL('../../../src/limiter/events/scripts/', import.meta.url);

describe('risk rule kinds', () => {
  it('are listed in order, each row named as its key', () => {
    expect(RISK_RULE_KINDS).toEqual(['window', 'last-n', 'distinct', 'seen']);
    for (const kind of RISK_RULE_KINDS) expect(RISK_KINDS[kind].name).toBe(kind);
  });

  it("each declares exactly the parameters its validation fills in, and keeps an example's values", () => {
    for (const kind of RISK_RULE_KINDS) {
      const example = EXAMPLES[kind];
      const rule = normalizeRiskRule({ name: 'r', kind, key: ['user'], ...example }, 0) as unknown as Record<string, unknown>;
      const parameters = Object.keys(rule).filter((field) => !['name', 'kind', 'key', 'mode', 'effect'].includes(field));
      expect(parameters.sort(), kind).toEqual([...RISK_KINDS[kind].parameters].sort());
      expect(rule, kind).toMatchObject(example);
    }
  });

  it("each kind's op has its piece of risk-batch.lua, includes/<kind>.lua, included by it", () => {
    const included = luaIncludes(readFileSync(fileURLToPath(new URL('risk-batch.lua', scripts)), 'utf8'));
    for (const kind of RISK_RULE_KINDS) {
      expect(existsSync(fileURLToPath(new URL(`includes/${kind}.lua`, scripts))), kind).toBe(true);
      expect(included, kind).toContain(`includes/${kind}`);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { Limiter, normalizeRule } from '../../src/limiter/limiter.js';
import { MemoryStore } from '../../src/limiter/stores/memory/memory-store.js';
import type { Rule } from '../../src/limiter/types.js';

const limiter = () => new Limiter({ store: new MemoryStore({ clock: new ManualClock(1_000_000) }) });
const RULES: Rule[] = [{ windowMs: 1000, limit: 1 }];

describe('Limiter argument validation', () => {
  it('needs a store', () => {
    expect(() => new Limiter({} as never)).toThrow(TypeError);
  });

  it.each([
    ['no rules', []],
    ['not an array', 'nope'],
    ['more than 16 rules', Array.from({ length: 17 }, () => ({ windowMs: 1000, limit: 1 }))],
    ['a rule that is not an object', [null]],
    ['windowMs 0', [{ windowMs: 0, limit: 1 }]],
    ['windowMs fractional', [{ windowMs: 1.5, limit: 1 }]],
    ['windowMs over 400 days', [{ windowMs: 401 * 86_400_000, limit: 1 }]],
    ['limit 0', [{ windowMs: 1000, limit: 0 }]],
    ['limit negative', [{ windowMs: 1000, limit: -1 }]],
    ['limit NaN', [{ windowMs: 1000, limit: Number.NaN }]],
    ['banMs negative', [{ windowMs: 1000, limit: 1, banMs: -5 }]],
    ['banMs fractional', [{ windowMs: 1000, limit: 1, banMs: 0.5 }]],
    ['an unknown algorithm', [{ windowMs: 1000, limit: 1, algorithm: 'leaky' }]],
  ])('rejects %s with a RangeError', async (_label, rules) => {
    await expect(limiter().check({ subject: 's', rules: rules as Rule[] })).rejects.toThrow(RangeError);
    await expect(limiter().peek({ subject: 's', rules: rules as Rule[] })).rejects.toThrow(RangeError);
  });

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(513)],
    ['not a string', 42],
  ])('rejects a subject that is %s with a TypeError', async (_label, subject) => {
    const l = limiter();
    await expect(l.check({ subject: subject as string, rules: RULES })).rejects.toThrow(TypeError);
    await expect(l.peek({ subject: subject as string, rules: RULES })).rejects.toThrow(TypeError);
    await expect(l.reset(subject as string)).rejects.toThrow(TypeError);
    await expect(l.ban(subject as string, 1000)).rejects.toThrow(TypeError);
    await expect(l.unban(subject as string)).rejects.toThrow(TypeError);
  });

  it.each([
    ['negative', -1],
    ['fractional', 1.5],
    ['NaN', Number.NaN],
    ['beyond the largest Date', 8_640_000_000_000_001],
    ['a string', '5'],
  ])('rejects a now that is %s with a TypeError', async (_label, now) => {
    await expect(limiter().check({ subject: 's', rules: RULES, now: now as number })).rejects.toThrow(TypeError);
    await expect(limiter().ban('s', 1000, now as number)).rejects.toThrow(TypeError);
  });

  it('rejects an empty or non-string requestId with a TypeError', async () => {
    await expect(limiter().check({ subject: 's', rules: RULES, requestId: '' })).rejects.toThrow(TypeError);
    await expect(limiter().check({ subject: 's', rules: RULES, requestId: 7 as unknown as string })).rejects.toThrow(TypeError);
  });

  it('undo needs the decision time, and a valid request id when one is given', async () => {
    const l = limiter();
    await expect(l.undo({ subject: 's', rules: RULES, requestId: '', at: 5 })).rejects.toThrow(TypeError);
    await expect(l.undo({ subject: 's', rules: RULES, requestId: 7 as unknown as string, at: 5 })).rejects.toThrow(TypeError);
    await expect(l.undo({ subject: 's', rules: RULES, requestId: 'q' } as never)).rejects.toThrow(TypeError);
    await expect(l.undo({ subject: 's', rules: RULES } as never)).rejects.toThrow(TypeError);
    await expect(l.undo({ subject: 's', rules: RULES, at: -1 })).rejects.toThrow(TypeError);
    await expect(l.undo({ subject: 's', rules: RULES, requestId: 'q', at: 5 })).resolves.toBeUndefined();
    await expect(l.undo({ subject: 's', rules: RULES, at: 5 })).resolves.toBeUndefined();
  });

  it('ban needs a positive integer duration', async () => {
    await expect(limiter().ban('s', 0)).rejects.toThrow(RangeError);
    await expect(limiter().ban('s', 2.5)).rejects.toThrow(RangeError);
  });

  it('fills rule defaults: no ban, sliding-log', () => {
    expect(normalizeRule({ windowMs: 1000, limit: 3 })).toEqual({ windowMs: 1000, limit: 3, banMs: 0, algorithm: 'sliding-log' });
  });
});

describe('Limiter decisions', () => {
  it('a denial is a resolved value, not a rejection', async () => {
    const l = limiter();
    await l.check({ subject: 's', rules: RULES });
    const denial = await l.check({ subject: 's', rules: RULES });
    expect(denial).toMatchObject({ allowed: false, code: 'RATE_LIMITED', rule: 0 });
    expect(denial.retryAfterMs).toBeGreaterThan(0);
  });

  it("uses the store's clock when no now is given", async () => {
    const clock = new ManualClock(5_000);
    const l = new Limiter({ store: new MemoryStore({ clock }) });
    expect((await l.check({ subject: 's', rules: RULES })).at).toBe(5_000);
    clock.advance(999);
    expect(await l.check({ subject: 's', rules: RULES })).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 1, at: 5_999 });
    clock.advance(1);
    expect((await l.check({ subject: 's', rules: RULES })).allowed).toBe(true);
  });
});

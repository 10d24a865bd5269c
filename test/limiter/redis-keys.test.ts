import { describe, expect, it } from 'vitest';
import { RedisKeys } from '../../src/limiter/stores/redis/keys.js';

describe('RedisKeys slot groups', () => {
  it('puts group k in the k-th equal slot range, so equal-range masters get equal shares', () => {
    const keys = new RedisKeys({ prefix: 'p', slotGroups: 48 });
    const perMaster = [0, 0, 0];
    const slots = new Set<number>();
    for (let i = 0; i < 30_000; i++) {
      const { slot, log, ban } = keys.subject(`s${i}`);
      slots.add(slot);
      perMaster[Math.floor((slot * 3) / 16_384)]!++;
      expect(log.replace(/log$/, 'ban')).toBe(ban);
      expect(log).toMatch(/^p:\{g\d+\.\d+\}:[\w-]{16}:log$/);
    }
    expect(slots.size).toBe(48);
    for (const count of perMaster) expect(count).toBeGreaterThan(9_000);
  });

  it('keeps one slot per subject by default, and validates the option', () => {
    expect(new RedisKeys({ prefix: 'p' }).subject('s').log).toMatch(/^p:\{[\w-]{16}\}:log$/);
    expect(() => new RedisKeys({ prefix: 'p', slotGroups: 0 })).toThrow(RangeError);
    expect(() => new RedisKeys({ prefix: 'p', slotGroups: 16_385 })).toThrow(RangeError);
  });
});

/** Deferral on MemoryStore against the brute-force model (test/limiter/defer-properties.ts). */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { Limiter } from '../../src/limiter/limiter.js';
import { MemoryStore } from '../../src/limiter/stores/memory/memory-store.js';
import { defineDeferProperties } from './defer-properties.js';

defineDeferProperties('MemoryStore deferral against the brute-force model', () => new MemoryStore({ clock: new ManualClock(0) }), {
  numRuns: 300,
});

describe('Limiter deferral', () => {
  const rules = [{ windowMs: 1_000, limit: 1, banMs: 10_000 }];

  it('refuses deferUntil without a request id (the deferred send is released by it)', async () => {
    const limiter = new Limiter({ store: new MemoryStore() });
    await expect(limiter.check({ subject: 's', rules, now: 0, deferUntil: 5_000 })).rejects.toThrow(/deferUntil needs a requestId/);
  });

  it('waits out a ban the ban cache has learnt: the store decides a deferred check', async () => {
    const limiter = new Limiter({ store: new MemoryStore({ clock: new ManualClock(0) }), banCache: true });
    await limiter.check({ subject: 's', rules, requestId: 'a', now: 0 });
    expect((await limiter.check({ subject: 's', rules, requestId: 'b', now: 100 })).code).toBe('RATE_LIMITED');
    expect((await limiter.check({ subject: 's', rules, requestId: 'c', now: 200 })).code).toBe('BANNED');
    const deferred = await limiter.check({ subject: 's', rules, requestId: 'd', now: 300, deferUntil: 60_000 });
    expect(deferred).toMatchObject({ allowed: true, code: 'OK', deferredTo: 10_100 });
  });
});

import { describe, expect, it } from 'vitest';
import type { BanCache } from '../../../src/limiter/cache/ban-cache.js';
import { ManualClock } from '../../../src/limiter/clock.js';
import { Limiter } from '../../../src/limiter/limiter.js';
import { MemoryStore } from '../../../src/limiter/stores/memory/memory-store.js';
import type { LimiterStore } from '../../../src/limiter/types.js';

const rules = [{ windowMs: 60_000, limit: 2, banMs: 10_000 }];

/** A store that counts the checks it decides. */
function counting(store: LimiterStore): LimiterStore & { checks: number } {
  const counted = Object.assign(Object.create(store) as LimiterStore, { checks: 0 });
  counted.check = (...args: Parameters<LimiterStore['check']>) => {
    counted.checks++;
    return store.check(...args);
  };
  return counted;
}

function setup(options: ConstructorParameters<typeof BanCache>[0] = {}) {
  const clock = new ManualClock(1_000_000);
  const store = counting(new MemoryStore({ clock }));
  const lookups: string[] = [];
  const limiter = new Limiter({ store, banCache: { clock, onLookup: (result) => lookups.push(result), ...options } });
  return { clock, store, limiter, lookups };
}

describe('ban cache', () => {
  it('answers a banned subject in process until the ban ends, then asks the store again', async () => {
    const { clock, store, limiter, lookups } = setup();
    for (let i = 0; i < 3; i++) await limiter.check({ subject: 's', rules }); // OK, OK, RATE_LIMITED → banned
    expect((await limiter.check({ subject: 's', rules })).code).toBe('BANNED'); // learnt here
    const before = store.checks;
    clock.advance(4_000);
    const cached = await limiter.check({ subject: 's', rules });
    expect(cached).toMatchObject({ allowed: false, code: 'BANNED', retryAfterMs: 6_000, counts: [] });
    expect(cached.at).toBe(clock.now());
    expect(store.checks).toBe(before);
    expect(lookups.filter((result) => result === 'hit')).toHaveLength(1);
    clock.advance(6_000); // the ban's end: the store decides again
    expect((await limiter.check({ subject: 's', rules })).code).toBe('RATE_LIMITED');
    expect(store.checks).toBe(before + 1);
  });

  it('never answers longer than maxTtlMs after it learnt the ban', async () => {
    const { clock, store, limiter } = setup({ maxTtlMs: 1_000 });
    for (let i = 0; i < 4; i++) await limiter.check({ subject: 's', rules });
    const before = store.checks;
    clock.advance(999);
    await limiter.check({ subject: 's', rules });
    expect(store.checks).toBe(before);
    clock.advance(1);
    expect((await limiter.check({ subject: 's', rules })).code).toBe('BANNED');
    expect(store.checks).toBe(before + 1);
  });

  it('unban, reset and invalidations drop the entry at once', async () => {
    const { store, limiter } = setup({ ownerOf: (subject) => subject.split(':')[0] });
    const ban = async (subject: string) => {
      await limiter.ban(subject, 60_000);
      await limiter.check({ subject, rules }); // learnt
    };
    await ban('a:1');
    await limiter.unban('a:1');
    expect((await limiter.check({ subject: 'a:1', rules })).code).toBe('OK');
    await ban('a:2');
    await limiter.reset('a:2');
    expect((await limiter.check({ subject: 'a:2', rules })).code).toBe('OK');
    // Lifted behind the cache's back (another instance): answered from the cache until invalidated.
    await ban('a:3');
    await ban('b:3');
    await store.unban('a:3');
    await store.unban('b:3');
    expect((await limiter.check({ subject: 'a:3', rules })).code).toBe('BANNED');
    limiter.invalidateOwner('a');
    expect((await limiter.check({ subject: 'a:3', rules })).code).toBe('OK');
    expect((await limiter.check({ subject: 'b:3', rules })).code).toBe('BANNED');
    limiter.invalidate();
    expect((await limiter.check({ subject: 'b:3', rules })).code).toBe('OK');
  });

  it('leaves checks with a request id to the store unless told they are never retried', async () => {
    const { store, limiter } = setup();
    await limiter.check({ subject: 's', rules, requestId: 'm1' });
    for (let i = 0; i < 3; i++) await limiter.check({ subject: 's', rules });
    const before = store.checks;
    // The retry of the admitted m1 reads OK although the subject is banned: only the store knows.
    expect((await limiter.check({ subject: 's', rules, requestId: 'm1' })).code).toBe('OK');
    expect(store.checks).toBe(before + 1);

    const fresh = setup({ answerRequestIds: (subject) => subject !== 'risk' });
    for (let i = 0; i < 4; i++) await fresh.limiter.check({ subject: 's', rules });
    const seen = fresh.store.checks;
    expect((await fresh.limiter.check({ subject: 's', rules, requestId: 'new' })).code).toBe('BANNED');
    expect(fresh.store.checks).toBe(seen);
  });

  it('compares explicit now values with the ban end on their own clock; never answers a peek', async () => {
    const { store, limiter } = setup();
    await limiter.ban('s', 5_000, 500);
    expect((await limiter.check({ subject: 's', rules, now: 1_000 })).retryAfterMs).toBe(4_500);
    const before = store.checks;
    expect(await limiter.check({ subject: 's', rules, now: 2_000 })).toMatchObject({ code: 'BANNED', retryAfterMs: 3_500, at: 2_000 });
    expect(store.checks).toBe(before);
    expect((await limiter.check({ subject: 's', rules, now: 5_500 })).code).toBe('OK');
    expect((await limiter.peek({ subject: 's', rules, now: 5_600 })).counts).toEqual([1]);
  });

  it('stays within maxEntries', async () => {
    const { limiter } = setup({ maxEntries: 3 });
    for (let i = 0; i < 10; i++) {
      await limiter.ban(`s${i}`, 60_000);
      await limiter.check({ subject: `s${i}`, rules });
    }
    expect(limiter.banCache!.size).toBe(3);
  });
});

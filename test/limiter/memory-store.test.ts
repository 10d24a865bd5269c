import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { Limiter } from '../../src/limiter/limiter.js';
import { MemoryStore, StoreCapacityError } from '../../src/limiter/stores/memory/memory-store.js';
import { defineStoreConformance } from './conformance.js';

defineStoreConformance('MemoryStore conformance', (clock) => new MemoryStore({ clock }));

describe('MemoryStore memory bounds', () => {
  const rules = [{ windowMs: 1000, limit: 1_000_000 }];

  it('evicts idle subjects once their longest window has passed on its clock', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock });
    const limiter = new Limiter({ store });
    for (let index = 0; index < 500; index++) await limiter.check({ subject: `idle:${index}`, rules });
    expect(store.size).toBe(500);
    // Still within the window: activity on another subject evicts nothing.
    clock.advance(999);
    for (let index = 0; index < 600; index++) await limiter.check({ subject: 'busy', rules });
    expect(store.size).toBe(501);
    clock.advance(1);
    for (let index = 0; index < 600; index++) await limiter.check({ subject: 'busy', rules });
    expect(store.size).toBe(1);
  });

  it('keeps a banned subject until its ban ends, however idle', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock });
    const limiter = new Limiter({ store });
    await limiter.ban('banned', 60_000);
    clock.advance(59_999);
    for (let index = 0; index < 10; index++) await limiter.check({ subject: 'other', rules });
    expect((await limiter.check({ subject: 'banned', rules })).code).toBe('BANNED');
    clock.advance(1);
    for (let index = 0; index < 10; index++) await limiter.check({ subject: 'other', rules });
    expect(store.size).toBe(1);
    expect(await limiter.unban('banned')).toBe(false);
  });

  it('with explicit times, eviction follows the clock and never compares one subject with another', async () => {
    const store = new MemoryStore({ clock: new ManualClock(0) });
    const limiter = new Limiter({ store });
    await limiter.check({ subject: 'late', rules, now: 10_000_000 });
    await limiter.check({ subject: 'early', rules: [{ windowMs: 1000, limit: 1 }], now: 5 });
    for (let index = 0; index < 10; index++) await limiter.check({ subject: 'late', rules, now: 10_000_000 + index });
    expect((await limiter.check({ subject: 'early', rules: [{ windowMs: 1000, limit: 1 }], now: 6 })).code).toBe('RATE_LIMITED');
  });

  it('trimming bounds the log to the longest window', async () => {
    const store = new MemoryStore({ clock: new ManualClock(0) });
    const limiter = new Limiter({ store });
    for (let t = 0; t < 20_000; t += 10) await limiter.check({ subject: 's', rules, now: t, requestId: `id-${t}` });
    // Entries in (t − 1000, t]: 100 of them, whatever the history.
    expect(store.logSize('s')).toBe(100);
    // And the ids trimmed with them: an old id is a new send again.
    const again = await limiter.check({ subject: 's', rules, now: 20_000, requestId: 'id-0' });
    expect(again.counts).toEqual([99]);
    expect(store.logSize('s')).toBe(100);
  });

  it('keeps no log for a set without sliding-log rules when no request id is given', async () => {
    const store = new MemoryStore({ clock: new ManualClock(0) });
    const limiter = new Limiter({ store });
    const counters = [
      { windowMs: 1000, limit: 100, algorithm: 'fixed-window' as const },
      { windowMs: 1000, limit: 100, algorithm: 'token-bucket' as const },
    ];
    for (let t = 0; t < 50; t++) await limiter.check({ subject: 'c', rules: counters, now: t });
    expect(store.logSize('c')).toBe(0);
  });

  // Regression (properties seed 1842960156): with explicit times, the ban a RATE_LIMITED check places
  // lives banMs on the store's clock, whatever the decision times; the property harness once ran on
  // the process clock and failed whenever the process stalled for banMs between check and unban.
  it('keeps the ban a RATE_LIMITED check places at explicit times for banMs on its clock, no longer', async () => {
    const clock = new ManualClock(5_000);
    const store = new MemoryStore({ clock });
    const limiter = new Limiter({ store });
    const banning = [{ algorithm: 'sliding-log' as const, windowMs: 60, limit: 2, banMs: 40 }];
    const t = 1_700_000_000_000;
    const hit = async (subject: string) => {
      await limiter.check({ subject, rules: banning, now: t + 81 });
      await limiter.check({ subject, rules: banning, now: t + 104, requestId: 'c' });
      return limiter.check({ subject, rules: banning, now: t + 122, requestId: 'b' });
    };
    expect((await hit('held')).code).toBe('RATE_LIMITED');
    clock.advance(39);
    expect(await limiter.unban('held')).toBe(true);
    expect((await hit('expired')).code).toBe('RATE_LIMITED');
    clock.advance(40);
    expect(await limiter.unban('expired')).toBe(false);
  });

  it('with a clock that does not move, explicit times never expire a ban or evict a subject', async () => {
    const store = new MemoryStore({ clock: new ManualClock(0) });
    const limiter = new Limiter({ store });
    const banning = [{ windowMs: 7, limit: 1, banMs: 40 }];
    expect((await limiter.check({ subject: 'a', rules: banning, now: 1_000 })).code).toBe('OK');
    expect((await limiter.check({ subject: 'a', rules: banning, now: 1_001 })).code).toBe('RATE_LIMITED');
    // Far later decision times on other subjects: sweeps inspect 'a' but its deadlines are on the clock.
    for (let index = 0; index < 20; index++)
      await limiter.check({ subject: `other:${index % 3}`, rules: banning, now: 10_000_000 + index });
    expect(store.size).toBe(4);
    expect((await limiter.peek({ subject: 'a', rules: banning, now: 1_002 })).code).toBe('BANNED');
    expect(await limiter.unban('a')).toBe(true);
    expect((await limiter.check({ subject: 'a', rules: banning, now: 1_003 })).counts).toEqual([1]);
  });
});

describe('MemoryStore maxSubjects', () => {
  const rules = [{ windowMs: 60_000, limit: 1 }];

  it('at the limit, drops the oldest subject (which forgets its counts) and says how many it dropped', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, maxSubjects: 3 });
    const limiter = new Limiter({ store });
    for (const subject of ['a', 'b', 'c']) expect((await limiter.check({ subject, rules })).allowed).toBe(true);
    expect((await limiter.check({ subject: 'a', rules })).allowed).toBe(false);
    expect((await limiter.check({ subject: 'd', rules })).allowed).toBe(true);
    expect([store.size, store.evictedLive]).toEqual([3, 1]);
    // 'a' was first seen, so first dropped: its send a moment ago is forgotten.
    expect((await limiter.check({ subject: 'a', rules })).allowed).toBe(true);
    expect(store.evictedLive).toBe(2);
  });

  it('makes room from expired subjects first: nothing that still matters is dropped', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, maxSubjects: 3 });
    const limiter = new Limiter({ store });
    for (const subject of ['a', 'b', 'c']) await limiter.check({ subject, rules });
    clock.advance(60_001); // every window has passed
    for (const subject of ['d', 'e', 'f']) expect((await limiter.check({ subject, rules })).allowed).toBe(true);
    expect([store.size, store.evictedLive]).toEqual([3, 0]);
  });

  it('at the limit, drops the least recently checked subject of a sample, not the first seen', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, maxSubjects: 3 });
    const limiter = new Limiter({ store });
    for (const subject of ['a', 'b', 'c']) {
      await limiter.check({ subject, rules });
      clock.advance(1);
    }
    await limiter.check({ subject: 'a', rules }); // a is used again: b is now the least recent
    clock.advance(1);
    await limiter.check({ subject: 'd', rules });
    expect((await limiter.check({ subject: 'a', rules })).allowed).toBe(false);
    expect((await limiter.check({ subject: 'b', rules })).allowed).toBe(true);
  });

  describe('with owners', () => {
    const owned = (maxSubjects: number) => {
      const clock = new ManualClock(1_000_000);
      const store = new MemoryStore({
        clock,
        maxSubjects,
        ownerOf: (subject) => subject.split(':')[0]!,
        pinned: (subject) => subject.endsWith(':quota'),
      });
      return { clock, store, limiter: new Limiter({ store }) };
    };
    const banning = [{ windowMs: 60_000, limit: 1, banMs: 600_000 }];

    it("an owner over its fair share makes room from its own subjects: another owner's counts and bans stay", async () => {
      const { clock, store, limiter } = owned(100);
      await limiter.check({ subject: 'victim:counted', rules });
      await limiter.check({ subject: 'victim:banned', rules: banning });
      expect((await limiter.check({ subject: 'victim:banned', rules: banning })).code).toBe('RATE_LIMITED');
      for (let n = 0; n < 1_000; n++) {
        clock.advance(1);
        expect((await limiter.check({ subject: `attacker:flood-${n}`, rules })).allowed).toBe(true);
      }
      expect(store.size).toBe(100);
      expect(store.evictedLive).toBe(902);
      expect((await limiter.check({ subject: 'victim:counted', rules })).code).toBe('RATE_LIMITED');
      expect((await limiter.check({ subject: 'victim:banned', rules: banning })).code).toBe('BANNED');
    });

    it('a pinned subject is never evicted, even by its own owner', async () => {
      const { clock, limiter } = owned(50);
      await limiter.check({ subject: 'tenant:quota', rules });
      for (let n = 0; n < 500; n++) {
        clock.advance(1);
        await limiter.check({ subject: `tenant:flood-${n}`, rules });
      }
      expect((await limiter.check({ subject: 'tenant:quota', rules })).code).toBe('RATE_LIMITED');
    });

    it('an owner below its fair share takes room from the owner holding most', async () => {
      const { clock, store, limiter } = owned(10);
      for (let n = 0; n < 10; n++) {
        clock.advance(1);
        await limiter.check({ subject: `big:${n}`, rules });
      }
      for (let n = 0; n < 5; n++) {
        clock.advance(1);
        await limiter.check({ subject: `small:${n}`, rules });
      }
      // Five of big's ten went, its least recent first; small's sixth would exceed its share of 5.
      expect((await limiter.check({ subject: 'big:5', rules })).allowed).toBe(false);
      expect((await limiter.check({ subject: 'big:4', rules })).allowed).toBe(true);
      clock.advance(1);
      await limiter.check({ subject: 'small:5', rules });
      expect((await limiter.check({ subject: 'small:0', rules })).allowed).toBe(true);
      expect(store.size).toBe(10);
    });

    it('with nothing that may make room, a new subject is refused and nothing is recorded', async () => {
      const { store, limiter } = owned(2);
      await limiter.check({ subject: 'a:quota', rules });
      await limiter.check({ subject: 'b:quota', rules });
      await expect(limiter.check({ subject: 'c:x', rules })).rejects.toThrow(StoreCapacityError);
      await expect(limiter.ban('c:x', 1_000)).rejects.toThrow(StoreCapacityError);
      expect(store.size).toBe(2);
    });
  });

  it('refuses a limit below 1', () => {
    expect(() => new MemoryStore({ maxSubjects: 0 })).toThrow(RangeError);
  });
});

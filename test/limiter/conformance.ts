/**
 * The conformance suite every LimiterStore passes: the semantics of src/limiter/types.ts on
 * hand-picked sequences, driven through `new Limiter({ store })` with an explicit `now` on every
 * call (so the store's own clock, or Redis TIME, plays no part). Every test uses a fresh random
 * subject, so stores sharing one Redis do not see each other.
 *
 * Usage: `defineStoreConformance('MemoryStore', (clock) => new MemoryStore({ clock }))`.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { Limiter, normalizeRules } from '../../src/limiter/limiter.js';
import type { Algorithm, Decision, LimiterStore, Rule, StoreCheck } from '../../src/limiter/types.js';
import { defineScheduledConformance } from './conformance-scheduled.js';
import { banned, HOUR, limited, MINUTE, ok, SECOND, SEED_RULES, T0 } from './conformance-support.js';

export function defineStoreConformance(
  name: string,
  openStore: (clock: ManualClock) => Promise<LimiterStore> | LimiterStore,
  closeStore?: (store: LimiterStore) => Promise<void>,
): void {
  describe(name, () => {
    let store: LimiterStore;
    let limiter: Limiter;
    let subject: string;

    beforeEach(async () => {
      store = await openStore(new ManualClock(T0));
      limiter = new Limiter({ store });
      subject = `conformance:${randomUUID()}`;
    });

    afterEach(async () => {
      if (closeStore) await closeStore(store);
      else await store.close?.();
    });

    /** Checks at T0 + offset and returns the decision. */
    const check = (rules: Rule[], offset: number, requestId?: string) => limiter.check({ subject, rules, now: T0 + offset, requestId });
    const peek = (rules: Rule[], offset: number) => limiter.peek({ subject, rules, now: T0 + offset });
    /** A check counted at T0 + countAt, decided at T0 + offset (a scheduled send). */
    const schedule = (rules: Rule[], offset: number, countAt: number, requestId?: string) =>
      limiter.check({ subject, rules, now: T0 + offset, countAt: T0 + countAt, requestId });

    it("the seed's rule set over a realistic sequence: limits, bans, windows sliding past", async () => {
      const s = SECOND;
      expect(await check(SEED_RULES, 0)).toEqual(ok([0, 0, 0], T0));
      expect(await check(SEED_RULES, 10 * s)).toEqual(ok([1, 1, 1], T0 + 10 * s));
      expect(await check(SEED_RULES, 20 * s)).toEqual(ok([2, 2, 2], T0 + 20 * s));
      // The 4th in a minute: rule 0 hit, banned 10 min (longer than the 30 s the window needs).
      expect(await check(SEED_RULES, 30 * s)).toEqual(limited(0, 10 * MINUTE, [3, 3, 3], T0 + 30 * s));
      expect(await check(SEED_RULES, 31 * s)).toEqual(banned(599 * s, T0 + 31 * s));
      expect(await check(SEED_RULES, 629 * s)).toEqual(banned(1 * s, T0 + 629 * s));
      // The ban ends at 30 s + 10 min.
      expect(await check(SEED_RULES, 630 * s)).toEqual(ok([0, 3, 3], T0 + 630 * s));
      expect(await check(SEED_RULES, 640 * s)).toEqual(ok([1, 4, 4], T0 + 640 * s));
      expect(await check(SEED_RULES, 650 * s)).toEqual(ok([2, 5, 5], T0 + 650 * s));
      // (640 s, 700 s]: the send at 640 s left the minute exactly now; 650 s still counts.
      expect(await check(SEED_RULES, 700 * s)).toEqual(ok([1, 6, 6], T0 + 700 * s));
      expect(await check(SEED_RULES, 800 * s)).toEqual(ok([0, 7, 7], T0 + 800 * s));
      expect(await check(SEED_RULES, 900 * s)).toEqual(ok([0, 8, 8], T0 + 900 * s));
      expect(await check(SEED_RULES, 1000 * s)).toEqual(ok([0, 9, 9], T0 + 1000 * s));
      // The 11th in an hour: rule 1 hit; the oldest send (0 s) leaves the hour at 3600 s, after the ban.
      expect(await check(SEED_RULES, 1100 * s)).toEqual(limited(1, 3600 * s - 1100 * s, [0, 10, 10], T0 + 1100 * s));
      expect(await check(SEED_RULES, 1200 * s)).toEqual(banned(500 * s, T0 + 1200 * s));
      // The ban is over at 1700 s but the hour is full until 3600 s: hit again, banned again.
      expect(await check(SEED_RULES, 3599 * s)).toEqual(limited(1, 600 * s, [0, 10, 10], T0 + 3599 * s));
      expect(await check(SEED_RULES, 3600 * s)).toEqual(banned(600 * s - 1 * s, T0 + 3600 * s));
      expect(await check(SEED_RULES, 4199 * s)).toEqual(ok([0, 7, 10], T0 + 4199 * s));
    });

    it('boundaries at exactly t - window: an entry at t - w no longer counts, one at t - w + 1 still does', async () => {
      for (const algorithm of ['sliding-log', 'fixed-window'] as const) {
        subject = `conformance:${randomUUID()}`;
        const rules: Rule[] = [{ windowMs: 1000, limit: 2, algorithm }];
        expect(await check(rules, 0)).toEqual(ok([0], T0));
        expect(await check(rules, 1)).toEqual(ok([1], T0 + 1));
        expect(await check(rules, 999)).toEqual(limited(0, 1, [2], T0 + 999));
        expect(await peek(rules, 1000)).toEqual(algorithm === 'sliding-log' ? ok([1], T0 + 1000) : ok([0], T0 + 1000));
      }
      subject = `conformance:${randomUUID()}`;
      const rules: Rule[] = [{ windowMs: 1000, limit: 1 }];
      expect(await check(rules, 0)).toEqual(ok([0], T0));
      expect(await check(rules, 999)).toEqual(limited(0, 1, [1], T0 + 999));
      expect(await check(rules, 1000)).toEqual(ok([0], T0 + 1000));
    });

    it('fixed-window admits 6 sends in 20 s across a minute boundary; sliding-log admits 3', async () => {
      const offsets = [-10, -8, -6, 0, 2, 4].map((seconds) => 5 * MINUTE + seconds * SECOND);
      const fixed: Rule[] = [{ windowMs: MINUTE, limit: 3, algorithm: 'fixed-window' }];
      const fixedDecisions = [];
      for (const offset of offsets) fixedDecisions.push(await check(fixed, offset));
      expect(fixedDecisions.map((decision) => decision.code)).toEqual(['OK', 'OK', 'OK', 'OK', 'OK', 'OK']);
      expect(fixedDecisions.map((decision) => decision.counts[0])).toEqual([0, 1, 2, 0, 1, 2]);

      subject = `conformance:${randomUUID()}`;
      const sliding: Rule[] = [{ windowMs: MINUTE, limit: 3 }];
      const slidingDecisions = [];
      for (const offset of offsets) slidingDecisions.push(await check(sliding, offset));
      expect(slidingDecisions.map((decision) => decision.code)).toEqual(['OK', 'OK', 'OK', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED']);
      // The oldest send (5 min − 10 s) leaves the window at 6 min − 10 s.
      expect(slidingDecisions[3]).toEqual(limited(0, 50 * SECOND, [3], T0 + 5 * MINUTE));
      expect(slidingDecisions[5]).toEqual(limited(0, 46 * SECOND, [3], T0 + 5 * MINUTE + 4 * SECOND));
    });

    it('a ban lasts until its end: BANNED one millisecond before, OK at the end', async () => {
      const rules: Rule[] = [{ windowMs: 100, limit: 1, banMs: 5000 }];
      expect(await check(rules, 0)).toEqual(ok([0], T0));
      expect(await check(rules, 10)).toEqual(limited(0, 5000, [1], T0 + 10));
      expect(await check(rules, 5009)).toEqual(banned(1, T0 + 5009));
      expect(await check(rules, 5010)).toEqual(ok([0], T0 + 5010));
    });

    it('the same request id is recorded once, answered OK on repeat, also while banned', async () => {
      const rules: Rule[] = [{ windowMs: MINUTE, limit: 2, banMs: MINUTE }];
      expect(await check(rules, 0, 'send-1')).toEqual(ok([0], T0));
      expect(await check(rules, 1, 'send-1')).toEqual(ok([1], T0 + 1));
      expect(await check(rules, 2, 'send-1')).toEqual(ok([1], T0 + 2));
      expect(await check(rules, 3, 'send-2')).toEqual(ok([1], T0 + 3));
      expect(await check(rules, 4, 'send-3')).toEqual(limited(0, MINUTE, [2], T0 + 4));
      // send-3 was rejected: not recorded, so while banned it is BANNED; send-1's retry is still OK.
      expect(await check(rules, 5, 'send-3')).toEqual(banned(MINUTE - 1, T0 + 5));
      expect(await check(rules, 6, 'send-1')).toEqual(ok([2], T0 + 6));
      expect(await peek(rules, 7)).toEqual(banned(MINUTE - 3, T0 + 7, [2]));
    });

    it('a check of a banned subject reads neither log nor counters: no counts, nothing trimmed', async () => {
      const rules: Rule[] = [
        { windowMs: 100, limit: 5 },
        { windowMs: 50, limit: 5, algorithm: 'fixed-window' },
      ];
      expect(await check(rules, 0, 'a')).toEqual(ok([0, 0], T0));
      await limiter.ban(subject, 10_000, T0 + 1);
      expect(await check(rules, 500)).toEqual(banned(9501, T0 + 500));
      // The peek is the look call: it still counts (and trims to 500 − 100 = 400: `a` is gone).
      expect(await peek(rules, 500)).toEqual(banned(9501, T0 + 500, [0, 0]));
      expect(await check(rules, 30, 'a')).toEqual(banned(9971, T0 + 30));
    });

    it('a banned check does not trim: a retry at an earlier time still finds its entry', async () => {
      const rules: Rule[] = [{ windowMs: 100, limit: 5 }];
      expect(await check(rules, 0, 'a')).toEqual(ok([0], T0));
      await limiter.ban(subject, 10_000, T0 + 1);
      // A trim at 500 would remove `a` (time 0 ≤ 400); the banned check must not run one.
      expect(await check(rules, 500)).toEqual(banned(9501, T0 + 500));
      expect(await check(rules, 500, 'b')).toEqual(banned(9501, T0 + 500));
      // Step 1 before the ban: `a` is in the log and within (t − L, ...] at 50, so its retry is OK.
      expect(await check(rules, 50, 'a')).toEqual(ok([1], T0 + 50));
      // At 100 its time 0 is not > 100 − 100: no longer in the log for this check, so BANNED.
      expect(await check(rules, 100, 'a')).toEqual(banned(9901, T0 + 100));
    });

    it('a request id is remembered while its entry is within the longest window of the set', async () => {
      const rules: Rule[] = [
        { windowMs: 1000, limit: 5, algorithm: 'fixed-window' },
        { windowMs: 100, limit: 5 },
      ];
      expect(await check(rules, 0, 'a')).toEqual(ok([0, 0], T0));
      expect(await check(rules, 500, 'b')).toEqual(ok([1, 0], T0 + 500));
      expect(await check(rules, 999, 'a')).toEqual(ok([2, 0], T0 + 999));
      // At 1000 the entry of `a` (time 0) leaves the 1000 ms horizon: `a` is a new send.
      expect(await check(rules, 1000, 'a')).toEqual(ok([0, 0], T0 + 1000));
      expect(await check(rules, 1001, 'c')).toEqual(ok([1, 1], T0 + 1001));
    });

    it('several rules hit: the longest of their bans applies and `rule` is the first hit', async () => {
      const rules: Rule[] = [
        { windowMs: HOUR, limit: 10, banMs: HOUR },
        { windowMs: 1000, limit: 1, banMs: 5000 },
        { windowMs: 1000, limit: 1, banMs: 20_000, algorithm: 'fixed-window' },
        { windowMs: 1000, limit: 1, algorithm: 'token-bucket' },
      ];
      expect(await check(rules, 0)).toEqual(ok([0, 0, 0, 0], T0));
      expect(await check(rules, 400)).toEqual(limited(1, 20_000, [1, 1, 1, 1], T0 + 400));
      expect(await check(rules, 20_399)).toEqual(banned(1, T0 + 20_399));
      expect(await check(rules, 20_400)).toEqual(ok([1, 0, 0, 0], T0 + 20_400));
    });

    it('without a ban, retryAfterMs is the latest of the hit rules', async () => {
      const rules: Rule[] = [
        { windowMs: 1000, limit: 1, algorithm: 'fixed-window' },
        { windowMs: 10_000, limit: 1 },
      ];
      expect(await check(rules, 200)).toEqual(ok([0, 0], T0 + 200));
      expect(await check(rules, 300)).toEqual(limited(0, 9900, [1, 1], T0 + 300));
      expect(await check(rules, 1000)).toEqual(limited(1, 9200, [0, 1], T0 + 1000));
      expect(await check(rules, 10_200)).toEqual(ok([0, 0], T0 + 10_200));
    });

    it('retryAfterMs is exact: a retry at t + retryAfterMs succeeds, one a millisecond earlier does not', async () => {
      const cases: Rule[][] = [
        [{ windowMs: 7000, limit: 2 }],
        [{ windowMs: 7000, limit: 2, algorithm: 'fixed-window' }],
        [{ windowMs: 1000, limit: 3, algorithm: 'token-bucket' }],
        [{ windowMs: 100, limit: 1, banMs: 1234 }],
      ];
      for (const rules of cases) {
        subject = `conformance:${randomUUID()}`;
        let offset = 1500;
        let denial: Decision | undefined;
        for (let attempt = 0; attempt < 20 && !denial; attempt++, offset += 50) {
          const decision = await check(rules, offset);
          if (!decision.allowed) denial = decision;
        }
        expect(denial, JSON.stringify(rules)).toBeDefined();
        const retryAt = denial!.at - T0 + denial!.retryAfterMs;
        expect((await peek(rules, retryAt - 1)).allowed, JSON.stringify(rules)).toBe(false);
        expect((await check(rules, retryAt)).allowed, JSON.stringify(rules)).toBe(true);
      }
    });

    it('retryAfterMs for each algorithm and for a ban set by hand', async () => {
      const fixed: Rule[] = [{ windowMs: MINUTE, limit: 1, algorithm: 'fixed-window' }];
      expect(await check(fixed, 10_000)).toEqual(ok([0], T0 + 10_000));
      expect(await check(fixed, 15_000)).toEqual(limited(0, 45_000, [1], T0 + 15_000));

      subject = `conformance:${randomUUID()}`;
      const bucket: Rule[] = [{ windowMs: 1000, limit: 2, algorithm: 'token-bucket' }];
      expect(await check(bucket, 0)).toEqual(ok([0], T0));
      expect(await check(bucket, 0)).toEqual(ok([1], T0));
      expect(await check(bucket, 100)).toEqual(limited(0, 400, [2], T0 + 100));

      subject = `conformance:${randomUUID()}`;
      await limiter.ban(subject, 10 * MINUTE, T0);
      expect(await check(SEED_RULES, 1)).toEqual(banned(10 * MINUTE - 1, T0 + 1));
    });

    it('a rejected attempt is not recorded, for every algorithm', async () => {
      const algorithms: Algorithm[] = ['sliding-log', 'fixed-window', 'token-bucket', 'sliding-counter'];
      for (const algorithm of algorithms) {
        subject = `conformance:${randomUUID()}`;
        const rules: Rule[] = [{ windowMs: 1000, limit: 2, algorithm }];
        expect((await check(rules, 0)).allowed).toBe(true);
        expect((await check(rules, 0)).allowed).toBe(true);
        for (let offset = 1; offset < 100; offset += 7) {
          const denial = await check(rules, offset);
          expect(denial.allowed, algorithm).toBe(false);
          // Still the two admitted sends, however many were rejected.
          expect(denial.counts, algorithm).toEqual([2]);
        }
        // Had the rejections (1..99 ms) been recorded, some would still be in the window (50, 1050].
        expect(await check(rules, 1050), algorithm).toEqual(ok([algorithm === 'sliding-counter' ? 1 : 0], T0 + 1050));
      }
    });

    it('peek records nothing and bans nothing, and reports the ban a check would impose', async () => {
      const rules: Rule[] = [{ windowMs: 1000, limit: 1, banMs: 5000 }];
      for (let offset = 0; offset < 5; offset++) expect(await peek(rules, offset)).toEqual(ok([0], T0 + offset));
      expect(await check(rules, 10)).toEqual(ok([0], T0 + 10));
      expect(await peek(rules, 20)).toEqual(limited(0, 5000, [1], T0 + 20));
      expect(await peek(rules, 21)).toEqual(limited(0, 5000, [1], T0 + 21));
      // Not banned: once the window has passed the next check is admitted.
      expect(await check(rules, 1010)).toEqual(ok([0], T0 + 1010));
    });

    it("a store's peek and banIfHit read only a peek's fields of the request they are given", async () => {
      const rules: Rule[] = [{ windowMs: 1000, limit: 1, banMs: 5000 }];
      expect(await check(rules, 10, 'sent')).toEqual(ok([0], T0 + 10));
      // A check's request: as a check, the repeat of 'sent' (OK); its id and count time are no peek's.
      const request: StoreCheck = { subject, rules: normalizeRules(rules), requestId: 'sent', now: T0 + 20, countAt: T0 + 2000 };
      expect(await store.peek(request)).toEqual(limited(0, 5000, [1], T0 + 20));
      expect(await peek(rules, 21)).toEqual(limited(0, 5000, [1], T0 + 21));
      expect(await store.banIfHit(request)).toEqual(limited(0, 5000, [1], T0 + 20));
      expect(await peek(rules, 21)).toEqual(banned(4999, T0 + 21, [1]));
    });

    it('undo takes an admitted attempt back under every algorithm, once', async () => {
      const algorithms: Algorithm[] = ['sliding-log', 'fixed-window', 'token-bucket', 'sliding-counter'];
      for (const algorithm of algorithms) {
        subject = `conformance:${randomUUID()}`;
        const rules: Rule[] = [{ windowMs: 10_000, limit: 2, algorithm }];
        expect((await check(rules, 100, 'u1')).allowed).toBe(true);
        expect((await check(rules, 200, 'u2')).allowed).toBe(true);
        expect((await check(rules, 300, 'u3')).allowed, algorithm).toBe(false);
        await limiter.undo({ subject, rules, requestId: 'u2', at: T0 + 200 });
        expect(await peek(rules, 300), algorithm).toEqual(ok([1], T0 + 300));
        // Undoing again, or undoing an id never admitted, changes nothing.
        await limiter.undo({ subject, rules, requestId: 'u2', at: T0 + 200 });
        await limiter.undo({ subject, rules, requestId: 'never', at: T0 + 200 });
        expect(await check(rules, 300, 'u3'), algorithm).toEqual(ok([1], T0 + 300));
        expect((await check(rules, 400, 'u4')).allowed, algorithm).toBe(false);
        // An undone id is no longer in the log: checked again it is a new send.
        await limiter.undo({ subject, rules, requestId: 'u3', at: T0 + 300 });
        expect(await check(rules, 500, 'u2'), algorithm).toEqual(ok([1], T0 + 500));
      }
    });

    it('undo with several rules of different algorithms', async () => {
      const rules: Rule[] = [
        { windowMs: MINUTE, limit: 2 },
        { windowMs: MINUTE, limit: 2, algorithm: 'fixed-window' },
        { windowMs: MINUTE, limit: 2, algorithm: 'token-bucket' },
        { windowMs: MINUTE, limit: 2, algorithm: 'sliding-counter' },
      ];
      expect(await check(rules, 0, 'a')).toEqual(ok([0, 0, 0, 0], T0));
      expect(await check(rules, 1, 'b')).toEqual(ok([1, 1, 1, 1], T0 + 1));
      await limiter.undo({ subject, rules, requestId: 'b', at: T0 + 1 });
      expect(await check(rules, 2, 'c')).toEqual(ok([1, 1, 1, 1], T0 + 2));
      expect((await check(rules, 3, 'd')).code).toBe('RATE_LIMITED');
    });

    it('undo without a request id takes an anonymous admission back under each counter algorithm', async () => {
      const algorithms: Algorithm[] = ['fixed-window', 'token-bucket', 'sliding-counter'];
      for (const algorithm of algorithms) {
        subject = `conformance:${randomUUID()}`;
        const rules: Rule[] = [{ windowMs: 10_000, limit: 2, algorithm }];
        expect((await check(rules, 100)).allowed, algorithm).toBe(true);
        const second = await check(rules, 200);
        expect(second.allowed, algorithm).toBe(true);
        expect((await check(rules, 300)).allowed, algorithm).toBe(false);
        await limiter.undo({ subject, rules, at: second.at });
        expect(await peek(rules, 300), algorithm).toEqual(ok([1], T0 + 300));
        expect(await check(rules, 300), algorithm).toEqual(ok([1], T0 + 300));
        expect((await check(rules, 400)).allowed, algorithm).toBe(false);
      }
    });

    it('undo without a request id: shared counters once, a window no longer stored untouched, never below 0', async () => {
      // Two rules counting the same fixed window share its counter: one admission, one decrement.
      const shared: Rule[] = [
        { windowMs: 10_000, limit: 3, algorithm: 'fixed-window' },
        { windowMs: 10_000, limit: 5, algorithm: 'fixed-window' },
      ];
      expect((await check(shared, 100)).allowed).toBe(true);
      expect((await check(shared, 200)).allowed).toBe(true);
      await limiter.undo({ subject, rules: shared, at: T0 + 200 });
      expect(await peek(shared, 300)).toEqual(ok([1, 1], T0 + 300));

      subject = `conformance:${randomUUID()}`;
      const fixed: Rule[] = [{ windowMs: 1000, limit: 2, algorithm: 'fixed-window' }];
      expect((await check(fixed, 500)).allowed).toBe(true);
      expect((await check(fixed, 1500)).allowed).toBe(true);
      // The attempt of window 0 is undone after window 1 replaced it: window 1 keeps its count.
      await limiter.undo({ subject, rules: fixed, at: T0 + 500 });
      expect(await peek(fixed, 1600)).toEqual(ok([1], T0 + 1600));
      await limiter.undo({ subject, rules: fixed, at: T0 + 1500 });
      // A caller breaking its promise (undoing twice) cannot push a count below 0.
      await limiter.undo({ subject, rules: fixed, at: T0 + 1500 });
      expect(await peek(fixed, 1600)).toEqual(ok([0], T0 + 1600));
      expect((await check(fixed, 1600)).allowed).toBe(true);
      expect(await check(fixed, 1700)).toEqual(ok([1], T0 + 1700));
      expect(await check(fixed, 1800)).toEqual(limited(0, 200, [2], T0 + 1800));
    });

    it('undo without a request id leaves sliding-log entries (they cannot be identified) and undoes the counters', async () => {
      const rules: Rule[] = [
        { windowMs: 10_000, limit: 2 },
        { windowMs: 10_000, limit: 2, algorithm: 'fixed-window' },
        { windowMs: 10_000, limit: 2, algorithm: 'token-bucket' },
      ];
      expect(await check(rules, 100)).toEqual(ok([0, 0, 0], T0 + 100));
      expect(await check(rules, 200)).toEqual(ok([1, 1, 1], T0 + 200));
      await limiter.undo({ subject, rules, at: T0 + 200 });
      // The sliding log still holds both entries; the counters hold one.
      expect(await peek(rules, 300)).toEqual(limited(0, 9800, [2, 1, 1], T0 + 300));
      // At 10.1 s the entry at 0.1 s has left the log (the one at 0.2 s has not), a new fixed window
      // has begun and the bucket has drained.
      expect(await check(rules, 10_100)).toEqual(ok([1, 0, 0], T0 + 10_100));
    });

    it('reset forgets history and ban', async () => {
      const rules: Rule[] = [{ windowMs: MINUTE, limit: 1, banMs: HOUR }];
      expect((await check(rules, 0, 'r')).allowed).toBe(true);
      expect((await check(rules, 1)).code).toBe('RATE_LIMITED');
      expect((await check(rules, 2)).code).toBe('BANNED');
      await limiter.reset(subject);
      expect(await check(rules, 3)).toEqual(ok([0], T0 + 3));
      // The id went with the history: `r` is a new send now, and the minute is full again.
      expect(await check(rules, 4, 'r')).toEqual(limited(0, HOUR, [1], T0 + 4));
    });

    it('ban and unban by hand: a longer ban replaces a shorter, unban reports whether there was one', async () => {
      const rules: Rule[] = [{ windowMs: MINUTE, limit: 5 }];
      expect(await limiter.unban(subject)).toBe(false);
      await limiter.ban(subject, 10_000, T0);
      await limiter.ban(subject, 5000, T0);
      expect(await check(rules, 100)).toEqual(banned(9900, T0 + 100));
      await limiter.ban(subject, 20_000, T0 + 100);
      expect(await check(rules, 200)).toEqual(banned(19_900, T0 + 200));
      expect(await limiter.unban(subject)).toBe(true);
      expect(await check(rules, 300)).toEqual(ok([0], T0 + 300));
      expect(await limiter.unban(subject)).toBe(false);
    });

    it('sliding-counter weights the previous bucket and stays within its error bound', async () => {
      // b = 6 s. Six sends in bucket 0, at 0, 0.5 s, ..., 2.5 s; the 7th is refused for b − m = 3 s.
      const rules: Rule[] = [{ windowMs: MINUTE, limit: 6, algorithm: 'sliding-counter' }];
      for (let index = 0; index < 6; index++) expect((await check(rules, index * 500)).allowed).toBe(true);
      expect(await check(rules, 3000)).toEqual(limited(0, 3000, [6], T0 + 3000));
      // At 63 s: k = 10, m = 3 s, S = 0, c = 6 → count floor(6 · 3/6) = 3, while exactly 0 sends are in (3 s, 63 s].
      const decision = await peek(rules, 63_000);
      expect(decision).toEqual(ok([3], T0 + 63_000));
      const exact = [0, 500, 1000, 1500, 2000, 2500].filter((time) => time > 3000).length;
      expect(Math.abs(decision.counts[0]! - exact)).toBeLessThanOrEqual(6);
      // At 61 s: m = 1 s, weighted 6 · 5/6 = 5 < 6 → admitted; at 60 s: 6 · 6/6 = 6 → limited for b − m = 6 s.
      expect(await peek(rules, 60_000)).toEqual(limited(0, 6000, [6], T0 + 60_000));
      expect(await check(rules, 61_000)).toEqual(ok([5], T0 + 61_000));
    });

    it('token-bucket: a burst of `limit`, then one admission per window / limit', async () => {
      const rules: Rule[] = [{ windowMs: 1000, limit: 5, algorithm: 'token-bucket' }];
      for (let index = 0; index < 5; index++) expect(await check(rules, 0)).toEqual(ok([index], T0));
      expect(await check(rules, 0)).toEqual(limited(0, 200, [5], T0));
      expect(await check(rules, 199)).toEqual(limited(0, 1, [5], T0 + 199));
      expect(await check(rules, 200)).toEqual(ok([4], T0 + 200));
      expect(await check(rules, 200)).toEqual(limited(0, 200, [5], T0 + 200));
      expect(await check(rules, 400)).toEqual(ok([4], T0 + 400));
      // Idle for a window: the bucket is full again.
      expect(await check(rules, 1600)).toEqual(ok([0], T0 + 1600));
    });

    it('a check with an earlier time than the last one counts only what is at or before it', async () => {
      const rules: Rule[] = [{ windowMs: 1000, limit: 2 }];
      expect(await check(rules, 500)).toEqual(ok([0], T0 + 500));
      expect(await check(rules, 100)).toEqual(ok([0], T0 + 100));
      expect(await check(rules, 600)).toEqual(limited(0, 500, [2], T0 + 600));
      expect(await check(rules, 1100)).toEqual(ok([1], T0 + 1100));
    });

    // Scheduled attempts (countAt): conformance-scheduled.ts.
    defineScheduledConformance({
      check,
      peek,
      schedule,
      undo: (rules, requestId, at) => limiter.undo({ subject, rules, requestId, at: T0 + at }),
    });

    it('fixed-window, time going back: the newest window keeps its count; an older window counts apart until replaced windows drop', async () => {
      const rules: Rule[] = [{ windowMs: 1000, limit: 3, algorithm: 'fixed-window' }];
      expect(await check(rules, 5000)).toEqual(ok([0], T0 + 5000));
      expect(await check(rules, 5100)).toEqual(ok([1], T0 + 5100));
      expect(await check(rules, 5200)).toEqual(ok([2], T0 + 5200));
      // Back to window 3: counted in its own window, not in window 5's place.
      expect(await check(rules, 3000)).toEqual(ok([0], T0 + 3000));
      expect(await check(rules, 5300)).toEqual(limited(0, 700, [3], T0 + 5300));
      expect(await check(rules, 5400)).toEqual(limited(0, 600, [3], T0 + 5400));
      expect(await check(rules, 3100)).toEqual(ok([1], T0 + 3100));
      await limiter.undo({ subject, rules, at: T0 + 3000 });
      expect(await peek(rules, 3200)).toEqual(ok([1], T0 + 3200));
      // Window 6 replaces window 5, which an older time then reads as empty; window 3 stays.
      expect(await check(rules, 6000)).toEqual(ok([0], T0 + 6000));
      expect(await peek(rules, 5500)).toEqual(ok([0], T0 + 5500));
      expect(await peek(rules, 3200)).toEqual(ok([1], T0 + 3200));
    });

    it('sliding-counter, time going back: buckets n - 10..n are kept, an older bucket counts apart, left buckets drop', async () => {
      // b = 100 ms: bucket 52 is [5200, 5300).
      const rules: Rule[] = [{ windowMs: 1000, limit: 3, algorithm: 'sliding-counter' }];
      expect(await check(rules, 5200)).toEqual(ok([0], T0 + 5200));
      expect(await check(rules, 5210)).toEqual(ok([1], T0 + 5210));
      expect(await check(rules, 5220)).toEqual(ok([2], T0 + 5220));
      // Bucket 30, below the kept 42..52 (and 30 ≡ 52 mod 11: it must not take bucket 52's place).
      expect(await check(rules, 3000)).toEqual(ok([0], T0 + 3000));
      expect(await peek(rules, 5230)).toEqual(limited(0, 70, [3], T0 + 5230));
      // Bucket 45, within the kept range.
      expect(await check(rules, 4500)).toEqual(ok([0], T0 + 4500));
      expect(await peek(rules, 5230)).toEqual(limited(0, 70, [4], T0 + 5230));
      expect(await peek(rules, 3050)).toEqual(ok([1], T0 + 3050));
      // Bucket 64 keeps 54..64: buckets 45 and 52 drop, bucket 30 stays.
      expect(await check(rules, 6400)).toEqual(ok([0], T0 + 6400));
      expect(await peek(rules, 5250)).toEqual(ok([0], T0 + 5250));
      expect(await peek(rules, 3050)).toEqual(ok([1], T0 + 3050));
      await limiter.undo({ subject, rules, at: T0 + 3000 });
      expect(await peek(rules, 3050)).toEqual(ok([0], T0 + 3050));
    });

    it('token-bucket, time going back: the arrival time ahead of it refuses until time catches up', async () => {
      // T = 500 ms: after one admission at 5000 the theoretical arrival time is 5500.
      const rules: Rule[] = [{ windowMs: 1000, limit: 2, algorithm: 'token-bucket' }];
      expect(await check(rules, 5000)).toEqual(ok([0], T0 + 5000));
      // At 3000: tokens in use ceil((5500 − 3000) / 500) = 5; admitted again at 5500 + 500 − 1000 = 5000.
      expect(await check(rules, 3000)).toEqual(limited(0, 2000, [5], T0 + 3000));
      expect(await check(rules, 5000)).toEqual(ok([1], T0 + 5000));
    });

    it('banIfHit: a peek that bans when the standing admissions hit a rule with a ban, recording nothing', async () => {
      const banIfHit = (rules: Rule[], offset: number) => limiter.banIfHit({ subject, rules, now: T0 + offset });
      for (const algorithm of ['sliding-log', 'fixed-window', 'sliding-counter', 'token-bucket'] as const) {
        subject = `conformance:${randomUUID()}`;
        // Checked without the ban (deferred), then asked to ban with it.
        const unbanned: Rule[] = [{ windowMs: MINUTE, limit: 2, algorithm }];
        const banning: Rule[] = [{ windowMs: MINUTE, limit: 2, banMs: 2 * MINUTE, algorithm }];
        expect(await check(unbanned, 0, 'a')).toEqual(ok([0], T0));
        // Not hit: nothing banned, nothing recorded (a second check is still admitted).
        expect((await banIfHit(banning, 1)).code).toBe('OK');
        expect((await check(unbanned, 2, 'b')).code).toBe('OK');
        expect((await check(unbanned, 3)).code).toBe('RATE_LIMITED');
        // One admission taken back: the window is no longer full, so no ban.
        await limiter.undo({ subject, rules: unbanned, requestId: 'b', at: T0 + 2 });
        expect((await banIfHit(banning, 4)).code).toBe('OK');
        expect((await check(unbanned, 5, 'c')).code).toBe('OK');
        // Full of standing admissions: banned from then for 2 minutes, as a check would have.
        expect(await banIfHit(banning, 6)).toMatchObject({ allowed: false, code: 'RATE_LIMITED', rule: 0, retryAfterMs: 2 * MINUTE });
        expect(await check(unbanned, 7)).toEqual(banned(2 * MINUTE - 1, T0 + 7));
        // Under a ban in force it answers BANNED and does not lengthen it.
        expect((await banIfHit(banning, 8)).code).toBe('BANNED');
        expect(await check(unbanned, 9)).toEqual(banned(2 * MINUTE - 3, T0 + 9));
      }
    });
  });
}

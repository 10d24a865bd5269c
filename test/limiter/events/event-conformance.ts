/**
 * The conformance suite every EventStore passes: the semantics of src/limiter/events/types.ts,
 * checked against brute-force reference models (fast-check sequences) and on hand-picked cases,
 * with an explicit `now` on every call. Each test uses fresh random subjects, so stores sharing
 * one Redis do not see each other.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bloomSize } from '../../../src/limiter/events/hashing.js';
import { HLL_STANDARD_ERROR } from '../../../src/limiter/events/hyperloglog.js';
import type { EventOp, EventResult, EventStore } from '../../../src/limiter/events/types.js';

const T0 = Date.UTC(2024, 0, 1);

/** last-n by brute force: every outcome ever pushed, the last n counted. */
class LastNModel {
  private readonly outcomes = new Map<string, string[]>();
  apply(op: Extract<EventOp, { kind: 'last-n' }>): EventResult {
    const all = this.outcomes.get(op.subject) ?? [];
    if (op.push !== undefined) all.push(op.push);
    this.outcomes.set(op.subject, all);
    const count = all.slice(-op.n).filter((o) => o === op.outcome).length;
    return { fired: count >= op.m, count };
  }
}

/** distinct by brute force: every recorded (time, value); the window's set recomputed each time. */
class DistinctModel {
  private readonly records = new Map<string, { at: number; value: string }[]>();
  apply(op: Extract<EventOp, { kind: 'distinct' }>, t: number): EventResult {
    const records = this.records.get(op.subject) ?? [];
    this.records.set(op.subject, records);
    const latest = new Map<string, number>();
    for (const record of records) {
      if (record.at > t - op.windowMs && record.at <= t) latest.set(record.value, Math.max(latest.get(record.value) ?? 0, record.at));
    }
    const count = latest.size;
    const fired = !latest.has(op.value) && count >= op.limit;
    if (op.record && !fired) records.push({ at: t, value: op.value });
    if (!fired) return { fired, count };
    return { fired, count, retryAfterMs: Math.min(...latest.values()) + op.windowMs - t };
  }
}

export function defineEventStoreConformance(name: string, openStore: () => EventStore, options: { heavy?: boolean } = {}): void {
  describe(name, () => {
    const runs = options.heavy ? 25 : 100;

    it('last-n matches the brute-force model on random sequences', async () => {
      const store = openStore();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 1, max: 8 }),
          fc.array(fc.record({ subject: fc.integer({ min: 0, max: 2 }), push: fc.option(fc.constantFrom('fail', 'ok', 'other')) }), {
            maxLength: 40,
          }),
          async (n, mRaw, steps) => {
            const m = Math.min(mRaw, n);
            const run = randomUUID();
            const model = new LastNModel();
            for (const step of steps) {
              const op: EventOp = {
                kind: 'last-n',
                subject: `${run}:${step.subject}`,
                n,
                m,
                outcome: 'fail',
                ...(step.push === null ? {} : { push: step.push }),
              };
              const [got] = await store.apply([op], T0);
              expect(got).toEqual(model.apply(op));
            }
          },
        ),
        { numRuns: runs },
      );
    });

    it('distinct matches the brute-force model on random sequences (exact range)', async () => {
      const store = openStore();
      await fc.assert(
        fc.asyncProperty(
          // 100: above the Redis store's small-set read (64), up to which it reads the window at once.
          fc.constantFrom(1, 2, 3, 4, 100),
          fc.integer({ min: 1, max: 5_000 }),
          fc.array(
            fc.record({
              subject: fc.integer({ min: 0, max: 1 }),
              value: fc.integer({ min: 0, max: 6 }),
              advance: fc.integer({ min: 0, max: 2_000 }),
              record: fc.boolean(),
            }),
            { maxLength: 40 },
          ),
          async (limit, windowMs, steps) => {
            const run = randomUUID();
            const model = new DistinctModel();
            let t = T0;
            for (const step of steps) {
              t += step.advance;
              const op: EventOp = {
                kind: 'distinct',
                subject: `${run}:${step.subject}`,
                windowMs,
                limit,
                value: `v${step.value}`,
                record: step.record,
              };
              const [got] = await store.apply([op], t);
              expect(got).toEqual(model.apply(op, t));
            }
          },
        ),
        { numRuns: runs },
      );
    });

    it('distinct: the check that would add one more value is denied, with the time until the oldest leaves', async () => {
      const store = openStore();
      const op = (value: string, record = true): EventOp => ({
        kind: 'distinct',
        subject: randomSubject,
        windowMs: 3_600_000,
        limit: 3,
        value,
        record,
      });
      const randomSubject = randomUUID();
      for (const [i, phone] of ['p1', 'p2', 'p3'].entries()) {
        expect(await store.apply([op(phone)], T0 + i * 1000)).toEqual([{ fired: false, count: i }]);
      }
      expect(await store.apply([op('p4')], T0 + 10_000)).toEqual([{ fired: true, count: 3, retryAfterMs: 3_600_000 - 10_000 }]);
      expect(await store.apply([op('p2')], T0 + 10_000)).toEqual([{ fired: false, count: 3 }]);
      // p1 leaves the window one hour after it was recorded.
      expect(await store.apply([op('p4')], T0 + 3_600_000)).toEqual([{ fired: false, count: 2 }]);
    });

    it('distinct above the exact range: the HyperLogLog estimate is within 3 standard errors over random sets of 20k–200k values', async () => {
      const store = openStore();
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 20_000, max: 200_000 }), async (n) => {
          const subject = randomUUID();
          const op = (value: string, record: boolean): EventOp => ({
            kind: 'distinct',
            subject,
            windowMs: 3_600_000,
            limit: 1_000_000_000,
            value,
            record,
          });
          const chunk = 5_000;
          for (let i = 0; i < n; i += chunk) {
            const size = Math.min(chunk, n - i);
            // Every value twice: repeats must not count.
            const values = Array.from({ length: size }, () => randomUUID());
            await store.apply(
              [...values, ...values].map((value) => op(value, true)),
              T0,
            );
          }
          const [probe] = await store.apply([op('probe', false)], T0 + 1);
          expect(probe!.fired).toBe(false);
          expect(Math.abs(probe!.count - n)).toBeLessThanOrEqual(3 * HLL_STANDARD_ERROR * n);
        }),
        { numRuns: options.heavy ? 2 : 4 },
      );
    }, 300_000);

    it('distinct above the exact range: fires at the estimated limit, for known values too, adding nothing until the generation turns over', async () => {
      const store = openStore();
      const subject = randomUUID();
      const windowMs = 3_600_000;
      const limit = 20_000;
      const t0 = Math.floor(T0 / windowMs) * windowMs;
      const op = (value: string, record = true): EventOp => ({ kind: 'distinct', subject, windowMs, limit, value, record });
      let firstFired: EventResult | undefined;
      let recorded = 0;
      for (let i = 0; !firstFired && i < 30; i++) {
        const results = await store.apply(
          Array.from({ length: 1_000 }, (_, j) => op(`v${i * 1_000 + j}`)),
          t0 + 10,
        );
        for (const result of results) {
          if (result.fired) {
            firstFired ??= result;
          } else recorded++;
        }
      }
      expect(firstFired).toBeDefined();
      expect(firstFired!.count).toBeGreaterThanOrEqual(limit);
      expect(firstFired!.retryAfterMs).toBe(windowMs - 10);
      // It took about `limit` admitted values (within 3 standard errors) to get there.
      expect(Math.abs(recorded - limit)).toBeLessThanOrEqual(3 * HLL_STANDARD_ERROR * limit);
      const [known] = await store.apply([op('v0')], t0 + 20);
      expect(known!.fired).toBe(true);
      expect(known!.count).toBe(firstFired!.count);
      // The next generation still counts the last one's values; the one after starts afresh.
      expect((await store.apply([op('new')], t0 + windowMs + 1))[0]!.fired).toBe(true);
      expect(await store.apply([op('new')], t0 + 2 * windowMs + 1)).toEqual([{ fired: false, count: 0 }]);
    }, 120_000);

    it('claim: the first claim of a subject passes, repeats fire until its TTL, a release frees it', async () => {
      const store = openStore();
      const subject = randomUUID();
      const claim = (ttlMs = 60_000): EventOp => ({ kind: 'claim', subject, ttlMs });
      expect(await store.apply([claim()], T0)).toEqual([{ fired: false, count: 0 }]);
      expect(await store.apply([claim(), claim()], T0 + 1)).toEqual([
        { fired: true, count: 1 },
        { fired: true, count: 1 },
      ]);
      expect(await store.apply([claim(0)], T0 + 2)).toEqual([{ fired: true, count: 1 }]);
      expect(await store.apply([claim()], T0 + 3)).toEqual([{ fired: false, count: 0 }]);
    });

    it('seen: fires for a first value only, and within a window forgets after two windows at most', async () => {
      const store = openStore();
      const { bits, hashes } = bloomSize(100, 0.001);
      const subject = randomUUID();
      const op = (value: string, windowMs?: number): EventOp => ({
        kind: 'seen',
        subject,
        bits,
        hashes,
        value,
        record: true,
        ...(windowMs === undefined ? {} : { windowMs }),
      });
      expect(await store.apply([op('d1')], T0)).toEqual([{ fired: true, count: 0 }]);
      expect(await store.apply([op('d1')], T0 + 1)).toEqual([{ fired: false, count: 1 }]);
      expect(await store.apply([op('d2')], T0 + 2)).toEqual([{ fired: true, count: 0 }]);
      const w = 60_000;
      const windowed = { ...op('x', w), subject: `${subject}:w` };
      expect(await store.apply([windowed], T0)).toEqual([{ fired: true, count: 0 }]);
      expect(await store.apply([windowed], T0 + w - 1)).toEqual([{ fired: false, count: 1 }]);
      // Seen in the previous generation: still seen, and carried into the current one.
      expect(await store.apply([windowed], T0 + w + 5)).toEqual([{ fired: false, count: 1 }]);
      expect(await store.apply([windowed], T0 + 3 * w)).toEqual([{ fired: true, count: 0 }]);
    });

    it('seen: no false negatives over 100k random values; false positives within the bound', async () => {
      const store = openStore();
      const capacity = 100_000;
      const p = 0.001;
      const { bits, hashes } = bloomSize(capacity, p);
      const subject = randomUUID();
      const op = (value: string, record: boolean): EventOp => ({ kind: 'seen', subject, bits, hashes, value, record });
      const inserted = Array.from({ length: capacity }, () => randomUUID());
      const chunk = 2_000;
      for (let i = 0; i < inserted.length; i += chunk)
        await store.apply(
          inserted.slice(i, i + chunk).map((value) => op(value, true)),
          T0,
        );
      let falseNegatives = 0;
      for (let i = 0; i < inserted.length; i += chunk) {
        const results = await store.apply(
          inserted.slice(i, i + chunk).map((value) => op(value, false)),
          T0,
        );
        falseNegatives += results.filter((r) => r.fired).length;
      }
      expect(falseNegatives).toBe(0);
      let falsePositives = 0;
      const probes = 100_000;
      for (let i = 0; i < probes; i += chunk) {
        const results = await store.apply(
          Array.from({ length: chunk }, () => op(randomUUID(), false)),
          T0,
        );
        falsePositives += results.filter((r) => !r.fired).length;
      }
      // Expected p · probes = 100 false positives; 5 standard deviations (√100 = 10) above is 150.
      console.info(`seen: ${falsePositives} false positives in ${probes} probes (bound ${p}) with ${bits} bits, ${hashes} hashes`);
      expect(falsePositives / probes).toBeLessThanOrEqual(p * 1.5);
    }, 120_000);
  });
}

/**
 * The conformance suite of `EventStore.decide` (a whole check in one atomic call): window ops
 * are exact sliding logs (brute-force model of every admission), a check's windows record only
 * when no vetoing op fired and it was not vetoed before, a window's breach bans at once (its log
 * holds only admissions that stand), event ops record as `apply` does.
 * Fresh random subjects per run, explicit non-decreasing times.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventOp, EventResult, EventStore } from '../../../src/limiter/events/types.js';

const T0 = Date.UTC(2024, 0, 1);

type WindowOp = Extract<EventOp, { kind: 'window' }>;
type DistinctOp = Extract<EventOp, { kind: 'distinct' }>;

/** Every admission ever made, per subject; a window's count recomputed from all of them. */
class CheckModel {
  private readonly admitted = new Map<string, { at: number; member: string }[]>();
  private readonly bans = new Map<string, number>();
  private readonly values = new Map<string, { at: number; value: string }[]>();

  decide(ops: readonly (WindowOp | DistinctOp)[], vetoes: readonly boolean[], vetoedBefore: boolean, t: number): EventResult[] {
    const writes: (() => void)[] = [];
    let vetoed = vetoedBefore;
    const results = ops.map((op, i) => {
      const result = op.kind === 'window' ? this.window(op, t, writes) : this.distinct(op, t);
      if (result.fired && vetoes[i]) vetoed = true;
      return result;
    });
    if (!vetoed) for (const write of writes) write();
    return results;
  }

  private window(op: WindowOp, t: number, writes: (() => void)[]): EventResult {
    const all = this.admitted.get(op.subject) ?? [];
    this.admitted.set(op.subject, all);
    const counted = all.filter((entry) => entry.at > t - op.windowMs && entry.at <= t).sort((a, b) => a.at - b.at);
    const member = op.member ?? '';
    if (member !== '' && counted.some((entry) => entry.member === member)) return { fired: false, count: counted.length };
    const banEnd = this.bans.get(op.subject) ?? 0;
    if (banEnd > t) return { fired: true, banned: true, count: op.record ? 0 : counted.length, retryAfterMs: banEnd - t };
    if (counted.length >= op.limit) {
      const banMs = op.banMs ?? 0;
      if (banMs > 0 && op.record) this.bans.set(op.subject, t + banMs);
      const retryAfterMs = counted[counted.length - op.limit]!.at + op.windowMs - t;
      return { fired: true, count: counted.length, retryAfterMs: Math.max(retryAfterMs, banMs) };
    }
    if (op.record) writes.push(() => all.push({ at: t, member }));
    return { fired: false, count: counted.length };
  }

  private distinct(op: DistinctOp, t: number): EventResult {
    const records = this.values.get(op.subject) ?? [];
    this.values.set(op.subject, records);
    const latest = new Map<string, number>();
    for (const r of records) if (r.at > t - op.windowMs && r.at <= t) latest.set(r.value, Math.max(latest.get(r.value) ?? 0, r.at));
    const fired = !latest.has(op.value) && latest.size >= op.limit;
    if (op.record && !fired) records.push({ at: t, value: op.value });
    return fired
      ? { fired, count: latest.size, retryAfterMs: Math.min(...latest.values()) + op.windowMs - t }
      : { fired, count: latest.size };
  }
}

export function defineCheckConformance(name: string, openStore: () => EventStore, options: { heavy?: boolean } = {}): void {
  describe(name, () => {
    const runs = options.heavy ? 30 : 100;

    it('decide matches the brute-force model: exact windows, written only by checks no vetoing rule denied, bans by their breach', async () => {
      const store = openStore();
      const decide = store.decide!;
      expect(decide).toBeTypeOf('function');
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 3 }),
          fc.constantFrom(0, 1_500),
          fc.array(
            fc.record({
              dt: fc.integer({ min: 0, max: 700 }),
              phone: fc.integer({ min: 0, max: 3 }),
              device: fc.integer({ min: 0, max: 1 }),
              retry: fc.option(fc.integer({ min: 0, max: 3 })),
              vetoes: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
              vetoed: fc.boolean(),
              record: fc.boolean(),
            }),
            { maxLength: 40 },
          ),
          async (limit, distinctLimit, banMs, steps) => {
            const run = randomUUID();
            const model = new CheckModel();
            let t = T0;
            for (const step of steps) {
              t += step.dt;
              const member = step.retry === null ? {} : { member: `req-${step.retry}` };
              const ops: (WindowOp | DistinctOp)[] = [
                { kind: 'window', subject: `${run}:w:${step.device}`, windowMs: 2_000, limit, banMs, record: step.record, ...member },
                {
                  kind: 'distinct',
                  subject: `${run}:d:${step.device}`,
                  windowMs: 3_000,
                  limit: distinctLimit,
                  value: `p${step.phone}`,
                  record: step.record,
                },
                { kind: 'window', subject: `${run}:w:p${step.phone}`, windowMs: 1_000, limit: 1, record: step.record, ...member },
              ];
              const got = await decide({ ops, vetoes: step.vetoes, vetoed: step.vetoed }, t);
              expect(got).toEqual(model.decide(ops, step.vetoes, step.vetoed, t));
            }
          },
        ),
        { numRuns: runs },
      );
    });

    it('a check denied by an event rule writes no window; a window op outside decide records when admitted', async () => {
      const store = openStore();
      const run = randomUUID();
      const window: WindowOp = { kind: 'window', subject: `${run}:w`, windowMs: 60_000, limit: 2, record: true };
      const full: DistinctOp = { kind: 'distinct', subject: `${run}:d`, windowMs: 60_000, limit: 1, value: 'a', record: true };
      await store.apply([full], T0);
      const other = { ...full, value: 'b' };
      for (let i = 0; i < 5; i++) {
        const [w, d] = await store.decide!({ ops: [window, other], vetoes: [true, true] }, T0 + i);
        expect(w).toEqual({ fired: false, count: 0 });
        expect(d!.fired).toBe(true);
      }
      // The same check not vetoed (the distinct rule in shadow): the window records.
      await store.decide!({ ops: [window, other], vetoes: [true, false] }, T0 + 10);
      expect((await store.apply([{ ...window, record: false }], T0 + 11))[0]).toEqual({ fired: false, count: 1 });
      await store.apply([window], T0 + 12);
      expect((await store.apply([window], T0 + 13))[0]).toEqual({ fired: true, count: 2, retryAfterMs: 60_000 - 3 });
      // The window leaves one entry at a time.
      expect((await store.apply([window], T0 + 60_010))[0]).toEqual({ fired: false, count: 1 });
    });
  });
}

/**
 * A risk rule's state for one subject stays within the bytes src/limiter/events/cost.ts states,
 * in process: the heap (with its array buffers) measured around many subjects filled to their
 * largest state, after a full garbage collection. The in-process store counts at least what the
 * heap holds, so its `maxBytes` bounds it. And the case: checks with a new user each
 * against a `distinct` rule above 10,000 cost a HyperLogLog's sparse start, not 32 KB apiece.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  directEvents,
  Limiter,
  MemoryEventStore,
  MemoryStore,
  normalizeRiskRule,
  normalizeRiskRules,
  RiskEngine,
  riskRuleStateBytes,
  type SeenRiskRule,
  seenFilterSize,
} from '../../../src/limiter/index.js';
import { T0, WORST_STATES } from './worst-states.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap and array buffers in use after full collections. */
function heapInUse(): number {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** Heap bytes per subject that `fill` leaves held by `make`'s result (after one fill to compile the code first). */
async function heapPerSubject<T>(subjects: number, make: () => T, fill: (held: T, subject: string) => Promise<void>) {
  await fill(make(), 'warm-up');
  const before = heapInUse();
  const held = make();
  for (let i = 0; i < subjects; i++) await fill(held, `subject-${i}`);
  const bytes = (heapInUse() - before) / subjects;
  return { held, bytes };
}

describe('risk state in process, measured on the heap', () => {
  for (const state of WORST_STATES) {
    it(`${state.name}: within riskRuleStateBytes, and the store counts at least as much`, async () => {
      const bound = riskRuleStateBytes(state.rule).bytes;
      const { held: store, bytes } = await heapPerSubject(
        state.inProcess,
        () => new MemoryEventStore({ keySecret: 'bytes', maxSubjects: 1e7, maxBytes: 1e12 }),
        (store, subject) => state.fill((ops, now) => store.apply(ops, now), subject),
      );
      expect(bytes).toBeLessThanOrEqual(bound);
      expect(store.bytes / state.inProcess).toBeGreaterThanOrEqual(bytes);
      expect(store.bytes / state.inProcess).toBeLessThanOrEqual(bound);
    });
  }

  it("window rules in the limiter, with the engine's own request ids: a sliding log of 1,000, a fixed window of 500 across its edge", async () => {
    for (const [algorithm, limit, times] of [
      ['sliding-log', 1000, (i: number) => T0 + i],
      // 500 at the end of one window and 500 at the start of the next: 1,000 ids in the log.
      ['fixed-window', 500, (i: number) => T0 + 600_000 - 500 + i],
    ] as const) {
      const rule = normalizeRiskRule({ name: 'w', kind: 'window', key: ['user'], windowMs: 600_000, limit, banMs: 60_000, algorithm }, 0);
      const { held: limiter, bytes } = await heapPerSubject(
        20,
        () => new Limiter({ store: new MemoryStore() }),
        async (limiter, user) => {
          const engine = new RiskEngine({ windows: limiter, peek: limiter, events: directEvents(new MemoryEventStore()), oneCall: false });
          for (let i = 0; i < 1000; i++) expect((await engine.check('t:', [rule], { user }, { now: times(i) })).allowed).toBe(true);
          // The breach: banned (deferred, standing admissions full).
          await engine.check('t:', [rule], { user }, { now: times(1000) });
          expect((await engine.check('t:', [rule], { user }, { now: times(1001) })).reasons[0]!.code).toBe('BANNED');
        },
      );
      expect(limiter.store).toBeInstanceOf(MemoryStore);
      expect(bytes, algorithm).toBeLessThanOrEqual(riskRuleStateBytes(rule).bytes);
    }
  });

  it('checks with a new user each, against a distinct rule above 10,000: about a kilobyte apiece, not two dense HyperLogLogs', async () => {
    const rules = normalizeRiskRules([
      { name: 'devices-per-user', kind: 'distinct', key: ['user'], of: 'device', windowMs: 3_600_000, limit: 50_000 },
    ]);
    const checks = 20_000;
    const { held: store, bytes } = await heapPerSubject(
      1,
      () => new MemoryEventStore({ keySecret: 'bytes', maxSubjects: 1e7, maxBytes: 1e12 }),
      async (store) => {
        const limiter = new Limiter({ store: new MemoryStore() });
        const engine = new RiskEngine({ windows: limiter, peek: limiter, events: directEvents(store) });
        for (let i = 0; i < checks; i++) await engine.check('tenant:', rules, { user: `user-${i}`, device: 'd' }, { now: T0 });
      },
    );
    expect(store.size).toBe(checks);
    // Dense from the first value, each subject held 2 × 16 KB (3.5 GB for 100,000 checks).
    expect(bytes / checks).toBeLessThan(2048);
  });

  it('maxBytes bounds the store: a flood of subjects drops the oldest, and the heap follows', async () => {
    const maxBytes = 4 * 1024 * 1024;
    const seen = normalizeRiskRule({ name: 's', kind: 'seen', key: ['user'], of: 'device' }, 0) as SeenRiskRule;
    const { bits, hashes } = seenFilterSize(seen);
    const { held: store, bytes } = await heapPerSubject(
      1,
      () => new MemoryEventStore({ keySecret: 'bytes', maxSubjects: 1e7, maxBytes }),
      async (store) => {
        for (let i = 0; i < 20_000; i++)
          await store.apply([{ kind: 'seen', subject: `flood-${i}`, bits, hashes, value: 'd', record: true }], T0);
      },
    );
    expect(store.bytes).toBeLessThanOrEqual(maxBytes);
    expect(store.size).toBeLessThan(20_000);
    expect(store.size * riskRuleStateBytes(seen).bytes).toBeGreaterThan(maxBytes / 2);
    expect(bytes).toBeLessThanOrEqual(maxBytes);
  });
});

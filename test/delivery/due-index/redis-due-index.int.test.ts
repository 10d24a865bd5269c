/**
 * RedisDueIndex on the shared standalone Redis and the shared Cluster: one suite, both backends,
 * a unique key prefix per run. The flush-and-rebuild test needs its own server:
 * redis-due-index-flush.int.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allocate, type SlotState, type TenantDemand } from '../../../src/core/fair-share.js';
import type { DueEntry } from '../../../src/delivery/due-index/due-index.js';
import { dueIndexKeys } from '../../../src/delivery/due-index/keys.js';
import { RedisDueIndex } from '../../../src/delivery/due-index/redis-due-index.js';
import { describeWith, servers } from '../../support/servers.js';

type Client = Redis | Cluster;

const BACKENDS: { name: string; variable: string; available: unknown; connect: () => Client }[] = [
  { name: 'standalone', variable: 'SLUICE_TEST_REDIS_URL', available: servers.redisUrl, connect: () => new Redis(servers.redisUrl!) },
  {
    name: 'cluster',
    variable: 'SLUICE_TEST_REDIS_CLUSTER',
    available: servers.redisCluster,
    connect: () => new Cluster(servers.redisCluster!),
  },
];

const T0 = Date.UTC(2026, 4, 5, 18, 0, 0);
/** Time-sortable ids like the real message ids: zero-padded, so text order = number order. */
const idOf = (n: number) => `m${String(n).padStart(6, '0')}`;

async function claimAll(index: RedisDueIndex, partition: string, now: number, batch: number): Promise<string[]> {
  const all: string[] = [];
  for (let round = 0; round < 10_000; round++) {
    const ids = await index.claim(partition, now, batch);
    if (ids.length === 0) return all;
    all.push(...ids);
  }
  throw new Error('claim never drained');
}

for (const backend of BACKENDS) {
  describeWith(backend.available, backend.variable, `RedisDueIndex (${backend.name})`, () => {
    let client: Client;
    let second: Client;
    const prefix = `test:${randomUUID()}:`;
    const index = () => new RedisDueIndex({ client, keyPrefix: prefix, writeBatch: 100 });
    let partitionSeq = 0;
    const freshPartition = () => `sms:${partitionSeq++}`;

    beforeAll(() => {
      client = backend.connect();
      second = backend.connect();
    });
    afterAll(() => {
      client.disconnect();
      second.disconnect();
    });

    it('claims due entries only, earliest first, ties by id, up to the limit', async () => {
      const due = index();
      const p = freshPartition();
      await due.addMany(p, [{ id: 'm3', tenantId: 't', dueAt: T0 + 3000 }]);
      await due.addMany(p, [{ id: 'm1', tenantId: 't', dueAt: T0 + 1000 }]);
      await due.addMany(p, [{ id: 'm2b', tenantId: 't', dueAt: T0 + 2000 }]);
      await due.addMany(p, [{ id: 'm2a', tenantId: 't', dueAt: T0 + 2000 }]);
      await due.addMany(p, [{ id: 'm9', tenantId: 't', dueAt: T0 + 120_000 }]); // not due
      expect(await due.size(p)).toBe(5);
      expect(await due.claim(p, T0 + 999, 10)).toEqual([]);
      expect(await due.claim(p, T0 + 2000, 2)).toEqual(['m1', 'm2a']);
      expect(await due.claim(p, T0 + 5000, 10)).toEqual(['m2b', 'm3']);
      expect(await due.claim(p, T0 + 5000, 10)).toEqual([]);
      expect(await due.claim(p, T0 + 120_000, 0)).toEqual([]);
      expect(await due.claim(p, T0 + 120_000, 10)).toEqual(['m9']);
      expect(await due.size(p)).toBe(0);
      expect(await client.exists(dueIndexKeys(prefix, p).ready)).toBe(0);
    });

    it('shares a claim among tenants by round-robin, transactional first: a late tenant is not behind an early backlog', async () => {
      const due = index();
      const p = freshPartition();
      await due.addMany(
        p,
        Array.from({ length: 600 }, (_, i) => ({ id: idOf(i), tenantId: 'a', dueAt: T0, priority: 'bulk' as const })),
      );
      await due.addMany(
        p,
        Array.from({ length: 20 }, (_, i) => ({ id: idOf(1000 + i), tenantId: 'b', dueAt: T0 + 1, priority: 'bulk' as const })),
      );
      await due.addMany(p, [{ id: idOf(2000), tenantId: 'c', dueAt: T0 + 2 }]);
      const first = await due.claim(p, T0 + 10, 9);
      expect(first[0]).toBe(idOf(2000)); // c's transactional one before either bulk backlog
      expect(first.filter((id) => id < idOf(1000))).toHaveLength(4);
      expect(first.filter((id) => id >= idOf(1000) && id < idOf(2000))).toHaveLength(4);
      // b's 20 are all out before a's 100th.
      const order = [...first, ...(await claimAll(due, p, T0 + 10, 8))];
      const lastOfB = order.lastIndexOf(idOf(1019));
      expect(order.slice(0, lastOfB).filter((id) => id < idOf(1000)).length).toBeLessThan(100);
    });

    it('gives a tenant below its share its slots even when every slot is held, up to twice the slots in all', async () => {
      const due = index();
      const p = freshPartition();
      await due.addMany(
        p,
        Array.from({ length: 50 }, (_, i) => ({ id: idOf(i), tenantId: 'slow', dueAt: T0 })),
      );
      await due.addMany(
        p,
        Array.from({ length: 50 }, (_, i) => ({ id: idOf(100 + i), tenantId: 'good', dueAt: T0 })),
      );
      const slots: SlotState = { concurrency: 8, inFlight: new Map([['slow', 8]]), weights: new Map(), minFree: 2 };
      const claimed = await due.claim(p, T0, 8, slots);
      expect(claimed).toEqual(Array.from({ length: 4 }, (_, i) => idOf(100 + i))); // good's share: 8 / 2
      // A tenant alone uses every slot.
      const alone = freshPartition();
      await due.addMany(
        alone,
        Array.from({ length: 50 }, (_, i) => ({ id: idOf(i), tenantId: 'solo', dueAt: T0 })),
      );
      expect(await due.claim(alone, T0, 16, { concurrency: 8, inFlight: new Map(), weights: new Map() })).toHaveLength(8);
    });

    it('claims what core/fair-share.ts allocates, for random tenants, weights, lanes and slots held', async () => {
      const due = index();
      let seed = 7;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      for (let round = 0; round < 25; round++) {
        const p = freshPartition();
        const tenants = Array.from({ length: 1 + Math.floor(random() * 6) }, (_, i) => `t${i}`);
        const demands: TenantDemand[] = [];
        const entries: DueEntry[] = [];
        let n = 0;
        for (const tenantId of tenants)
          for (const lane of [0, 1] as const) {
            const available = Math.floor(random() * 12);
            if (available === 0) continue;
            demands.push({ tenantId, lane, available });
            for (let i = 0; i < available; i++)
              entries.push({ id: idOf(n++), tenantId, dueAt: T0, ...(lane === 1 ? { priority: 'bulk' as const } : {}) });
          }
        const concurrency = 1 + Math.floor(random() * 16);
        const inFlight = new Map(tenants.filter(() => random() < 0.4).map((t) => [t, Math.floor(random() * concurrency)] as const));
        const weights = new Map(tenants.filter(() => random() < 0.5).map((t) => [t, 1 + Math.floor(random() * 5)] as const));
        const held = [...inFlight.values()].reduce((a, b) => a + b, 0);
        const slots: SlotState = { concurrency, inFlight, weights, minFree: 1 + Math.floor(random() * 3), after: 't2' };
        await due.addMany(p, entries);
        const byTenant = new Map(entries.map((e) => [e.id, `${e.priority === 'bulk' ? 1 : 0}:${e.tenantId}`]));
        const claimed = await due.claim(p, T0, 2 * concurrency - held, slots);
        const got = new Map<string, number>();
        for (const id of claimed) got.set(byTenant.get(id)!, (got.get(byTenant.get(id)!) ?? 0) + 1);
        const expected = new Map(allocate(demands, slots).map((t) => [`${t.lane}:${t.tenantId}`, t.count]));
        expect(got).toEqual(expected);
      }
    });

    it('partitions are independent', async () => {
      const due = index();
      const [a, b] = [freshPartition(), freshPartition()];
      await due.addMany(a, [{ id: 'x', tenantId: 't', dueAt: T0 }]);
      await due.addMany(b, [{ id: 'y', tenantId: 't', dueAt: T0 }]);
      expect(await due.claim(a, T0, 10)).toEqual(['x']);
      expect(await due.claim(b, T0, 10)).toEqual(['y']);
      expect(() => dueIndexKeys(prefix, 'sms{0}')).toThrow(/invalid/);
      await expect(due.claim('bad partition', T0, 1)).rejects.toThrow(/invalid/);
    });

    it('two concurrent claimers over 2,000 ids get disjoint sets that together are complete', async () => {
      const p = freshPartition();
      const entries: DueEntry[] = Array.from({ length: 2000 }, (_, i) => ({ id: idOf(i), tenantId: 't', dueAt: T0 + (i % 500) * 100 }));
      expect(await index().addMany(p, entries)).toBe(2000);
      const claimer = (c: Client) => claimAll(new RedisDueIndex({ client: c, keyPrefix: prefix }), p, T0 + 60_000, 37);
      const [first, other] = await Promise.all([claimer(client), claimer(second)]);
      expect(first.length).toBeGreaterThan(0);
      expect(other.length).toBeGreaterThan(0);
      const both = [...first, ...other];
      expect(new Set(both).size).toBe(both.length);
      expect(new Set(both)).toEqual(new Set(entries.map((e) => e.id)));
      expect(await index().size(p)).toBe(0);
    });

    it('rebuild is idempotent and accepts async iterables', async () => {
      const due = index();
      const p = freshPartition();
      const entries = Array.from({ length: 500 }, (_, i) => ({ id: idOf(i), tenantId: 't', dueAt: T0 + i * 37 }));
      async function* fromSql() {
        for (const entry of entries) yield entry;
      }
      expect(await due.rebuild(p, fromSql())).toBe(500);
      expect(await due.rebuild(p, entries)).toBe(0);
      expect(await due.size(p)).toBe(500);
      await due.claim(p, T0 + 37 * 99, 1000); // the first 100 are sent...
      expect(await due.rebuild(p, entries.slice(100))).toBe(0); // ...and SQL lists only the rest
      expect(await due.size(p)).toBe(400);
      expect(await claimAll(due, p, T0 + 60_000, 64)).toEqual(entries.slice(100).map((e) => e.id));
    });

    it('a rebuild running while claimers claim loses nothing', async () => {
      const p = freshPartition();
      const entries = Array.from({ length: 1500 }, (_, i) => ({ id: idOf(i), tenantId: 't', dueAt: T0 + i * 40 }));
      await index().addMany(p, entries.slice(0, 750));
      const claimer = new RedisDueIndex({ client: second, keyPrefix: prefix });
      const claimed: string[] = [];
      const claiming = (async () => {
        for (let round = 0; round < 2000 && new Set(claimed).size < entries.length; round++) {
          const ids = await claimer.claim(p, T0 + 60_000, 25);
          claimed.push(...ids);
          if (ids.length === 0) await new Promise((r) => setTimeout(r, 2));
        }
      })();
      await index().rebuild(p, entries);
      await claiming;
      claimed.push(...(await claimAll(index(), p, T0 + 60_000, 500)));
      // Every message is found; a re-added entry may come twice, which the guarded SQL update absorbs.
      expect(new Set(claimed)).toEqual(new Set(entries.map((e) => e.id)));
    });

    it('size counts all entries, or only the due backlog', async () => {
      const due = index();
      const p = freshPartition();
      await due.addMany(
        p,
        Array.from({ length: 30 }, (_, i) => ({ id: idOf(i), tenantId: 't', dueAt: T0 + i * 100 })),
      );
      expect(await due.size(p)).toBe(30);
      expect(await due.size(p, T0 - 1)).toBe(0);
      expect(await due.size(p, T0 + 1450)).toBe(15);
      expect(await due.size(p, T0 + 100_000)).toBe(30);
    });

    it('nextDueAt: the earliest entry due by a limit, across queues, or undefined', async () => {
      const due = index();
      const p = freshPartition();
      expect(await due.nextDueAt(p, T0 + 100_000)).toBeUndefined();
      await due.addMany(p, [
        { id: idOf(1), tenantId: 't', dueAt: T0 + 5_300 },
        { id: idOf(2), tenantId: 't', dueAt: T0 + 2_700 },
        { id: idOf(3), tenantId: 't', dueAt: T0 + 2_900 },
      ]);
      expect(await due.nextDueAt(p, T0 + 100_000)).toBe(T0 + 2_700);
      expect(await due.nextDueAt(p, T0 + 2_699)).toBeUndefined();
      expect(await due.claim(p, T0 + 2_800, 10)).toEqual([idOf(2)]);
      expect(await due.nextDueAt(p, T0 + 100_000)).toBe(T0 + 2_900);
      // A later entry answers once the earlier ones are claimed.
      await due.claim(p, T0 + 3_000, 10);
      expect(await due.nextDueAt(p, T0 + 100_000)).toBe(T0 + 5_300);
    });

    it('needsRebuild: true until a rebuild completes, true again once the partition is wiped', async () => {
      const due = index();
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      const entries = Array.from({ length: 10 }, (_, i) => ({ id: idOf(i), tenantId: 't', dueAt: T0 + i * 1000 }));
      await due.addMany(p, entries);
      expect(await due.needsRebuild(p)).toBe(true); // adds alone prove nothing about completeness
      await due.rebuild(p, entries);
      expect(await due.needsRebuild(p)).toBe(false);
      const marker = await client.get(keys.rebuilt);
      await due.rebuild(p, entries); // a periodic rebuild keeps the marker
      expect(await client.get(keys.rebuilt)).toBe(marker);
      // A wipe (what FLUSHALL or an empty restart does to this partition's slot).
      const queueKeys = (await client.zrange(keys.ready, 0, -1)).map((q) => `${keys.queuePrefix}${q}`);
      for (const key of [keys.rebuilt, keys.ready, ...queueKeys]) await client.del(key);
      expect(await due.needsRebuild(p)).toBe(true);
      expect(await due.rebuild(p, entries)).toBe(10);
      expect(await due.needsRebuild(p)).toBe(false);
      expect(await claimAll(due, p, T0 + 60_000, 4)).toEqual(entries.map((e) => e.id));
    });

    it('a wipe during a rebuild leaves the index marked as needing another', async () => {
      const due = index();
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      const small = new RedisDueIndex({ client, keyPrefix: prefix, writeBatch: 5 });
      for (const firstRebuild of [true, false]) {
        if (!firstRebuild) await due.rebuild(p, []); // the marker says "ready" before this rebuild
        async function* wipedHalfway() {
          for (let i = 0; i < 20; i++) {
            if (i === 10) {
              const queueKeys = (await client.zrange(keys.ready, 0, -1)).map((q) => `${keys.queuePrefix}${q}`);
              for (const key of [keys.rebuilt, keys.ready, ...queueKeys]) await client.del(key);
            }
            yield { id: idOf(i), tenantId: 't', dueAt: T0 + i };
          }
        }
        await small.rebuild(p, wipedHalfway());
        expect(await due.needsRebuild(p)).toBe(true);
        expect(await due.size(p)).toBe(10);
        await due.claim(p, T0 + 60_000, 100);
      }
    });

    it('a listed queue whose set is gone is dropped by the next claim', async () => {
      const due = index();
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      await due.addMany(p, [
        { id: 'lost', tenantId: 'gone', dueAt: T0 },
        { id: 'kept', tenantId: 't', dueAt: T0 + 1000 },
      ]);
      await client.del(`${keys.queuePrefix}0|gone`);
      expect(await due.claim(p, T0 + 2000, 10)).toEqual(['kept']);
      expect(await client.exists(keys.ready)).toBe(0);
    });
  });
}

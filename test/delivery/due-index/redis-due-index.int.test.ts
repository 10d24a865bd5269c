/**
 * RedisDueIndex on the shared standalone Redis and the shared Cluster: one suite, both backends,
 * a unique key prefix per run. The flush-and-rebuild test needs its own server:
 * redis-due-index-flush.int.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
    const index = (bucketMs = 60_000) => new RedisDueIndex({ client, keyPrefix: prefix, bucketMs, writeBatch: 100 });
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
      await due.add(p, 'm3', T0 + 3000);
      await due.add(p, 'm1', T0 + 1000);
      await due.add(p, 'm2b', T0 + 2000);
      await due.add(p, 'm2a', T0 + 2000);
      await due.add(p, 'm9', T0 + 120_000); // two buckets later, not due
      expect(await due.size(p)).toBe(5);
      expect(await due.claim(p, T0 + 999, 10)).toEqual([]);
      expect(await due.claim(p, T0 + 2000, 2)).toEqual(['m1', 'm2a']);
      expect(await due.claim(p, T0 + 5000, 10)).toEqual(['m2b', 'm3']);
      expect(await due.claim(p, T0 + 5000, 10)).toEqual([]);
      expect(await due.claim(p, T0 + 120_000, 0)).toEqual([]);
      expect(await due.claim(p, T0 + 120_000, 10)).toEqual(['m9']);
      expect(await due.size(p)).toBe(0);
      expect(await client.exists(dueIndexKeys(prefix, p).buckets)).toBe(0);
    });

    it('partitions are independent', async () => {
      const due = index();
      const [a, b] = [freshPartition(), freshPartition()];
      await due.add(a, 'x', T0);
      await due.add(b, 'y', T0);
      expect(await due.claim(a, T0, 10)).toEqual(['x']);
      expect(await due.claim(b, T0, 10)).toEqual(['y']);
      expect(() => dueIndexKeys(prefix, 'sms{0}')).toThrow(/invalid/);
      await expect(due.claim('bad partition', T0, 1)).rejects.toThrow(/invalid/);
    });

    it('two concurrent claimers over 2,000 ids get disjoint sets that together are complete', async () => {
      const p = freshPartition();
      const entries: DueEntry[] = Array.from({ length: 2000 }, (_, i) => ({ id: idOf(i), dueAt: T0 + (i % 500) * 100 }));
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

    it('spreads entries over time buckets, claims across them in order and drops drained buckets', async () => {
      const due = index(1000);
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      const entries = Array.from({ length: 400 }, (_, i) => ({ id: idOf(i), dueAt: T0 + i * 250 })); // 4 per second
      await due.addMany(p, [...entries].reverse());
      const buckets = await client.zrange(keys.buckets, 0, -1);
      expect(buckets).toHaveLength(100);
      expect(buckets[0]).toBe(String(T0));
      expect(await client.zcard(`${keys.bucketPrefix}${T0 + 42_000}`)).toBe(4);

      const claimed = await claimAll(due, p, T0 + 49_999, 30);
      expect(claimed).toEqual(entries.slice(0, 200).map((e) => e.id));
      expect(await client.zcard(keys.buckets)).toBe(50);
      expect(await client.exists(`${keys.bucketPrefix}${T0}`)).toBe(0);
      expect(await client.exists(`${keys.bucketPrefix}${T0 + 49_000}`)).toBe(0);
      expect(await client.exists(`${keys.bucketPrefix}${T0 + 50_000}`)).toBe(1);
      expect(await due.size(p)).toBe(200);
      // A limit larger than one bucket takes from several buckets in one call.
      expect(await due.claim(p, T0 + 100_000, 10)).toEqual(entries.slice(200, 210).map((e) => e.id));
    });

    it('buckets written under another width still drain, each when due', async () => {
      const p = freshPartition();
      await index(60_000).add(p, 'old', T0 + 30_000);
      await index(1000).add(p, 'new', T0 + 29_000);
      expect(await index(1000).claim(p, T0 + 29_000, 10)).toEqual(['new']);
      expect(await index(1000).claim(p, T0 + 30_000, 10)).toEqual(['old']);
      expect(await index(1000).size(p)).toBe(0);
    });

    it('rebuild is idempotent and accepts async iterables', async () => {
      const due = index(1000);
      const p = freshPartition();
      const entries = Array.from({ length: 500 }, (_, i) => ({ id: idOf(i), dueAt: T0 + i * 37 }));
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
      const entries = Array.from({ length: 1500 }, (_, i) => ({ id: idOf(i), dueAt: T0 + i * 40 }));
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
      const due = index(1000);
      const p = freshPartition();
      await due.addMany(
        p,
        Array.from({ length: 30 }, (_, i) => ({ id: idOf(i), dueAt: T0 + i * 100 })),
      );
      expect(await due.size(p)).toBe(30);
      expect(await due.size(p, T0 - 1)).toBe(0);
      expect(await due.size(p, T0 + 1450)).toBe(15);
      expect(await due.size(p, T0 + 100_000)).toBe(30);
    });

    it('nextDueAt: the earliest entry due by a limit, across buckets, or undefined', async () => {
      const due = index(1000);
      const p = freshPartition();
      expect(await due.nextDueAt(p, T0 + 100_000)).toBeUndefined();
      await due.addMany(p, [
        { id: idOf(1), dueAt: T0 + 5_300 },
        { id: idOf(2), dueAt: T0 + 2_700 },
        { id: idOf(3), dueAt: T0 + 2_900 },
      ]);
      expect(await due.nextDueAt(p, T0 + 100_000)).toBe(T0 + 2_700);
      expect(await due.nextDueAt(p, T0 + 2_699)).toBeUndefined();
      expect(await due.claim(p, T0 + 2_800, 10)).toEqual([idOf(2)]);
      expect(await due.nextDueAt(p, T0 + 100_000)).toBe(T0 + 2_900);
      // A later bucket answers once the earlier ones are drained.
      await due.claim(p, T0 + 3_000, 10);
      expect(await due.nextDueAt(p, T0 + 100_000)).toBe(T0 + 5_300);
    });

    it('needsRebuild: true until a rebuild completes, true again once the partition is wiped', async () => {
      const due = index(1000);
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      const entries = Array.from({ length: 10 }, (_, i) => ({ id: idOf(i), dueAt: T0 + i * 1000 }));
      await due.addMany(p, entries);
      expect(await due.needsRebuild(p)).toBe(true); // adds alone prove nothing about completeness
      await due.rebuild(p, entries);
      expect(await due.needsRebuild(p)).toBe(false);
      const marker = await client.get(keys.rebuilt);
      await due.rebuild(p, entries); // a periodic rebuild keeps the marker
      expect(await client.get(keys.rebuilt)).toBe(marker);
      // A wipe (what FLUSHALL or an empty restart does to this partition's slot).
      const bucketKeys = (await client.zrange(keys.buckets, 0, -1)).map((b) => `${keys.bucketPrefix}${b}`);
      for (const key of [keys.rebuilt, keys.buckets, ...bucketKeys]) await client.del(key);
      expect(await due.needsRebuild(p)).toBe(true);
      expect(await due.rebuild(p, entries)).toBe(10);
      expect(await due.needsRebuild(p)).toBe(false);
      expect(await claimAll(due, p, T0 + 60_000, 4)).toEqual(entries.map((e) => e.id));
    });

    it('a wipe during a rebuild leaves the index marked as needing another', async () => {
      const due = index(1000);
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      const small = new RedisDueIndex({ client, keyPrefix: prefix, bucketMs: 1000, writeBatch: 5 });
      for (const firstRebuild of [true, false]) {
        if (!firstRebuild) await due.rebuild(p, []); // the marker says "ready" before this rebuild
        async function* wipedHalfway() {
          for (let i = 0; i < 20; i++) {
            if (i === 10) {
              const bucketKeys = (await client.zrange(keys.buckets, 0, -1)).map((b) => `${keys.bucketPrefix}${b}`);
              for (const key of [keys.rebuilt, keys.buckets, ...bucketKeys]) await client.del(key);
            }
            yield { id: idOf(i), dueAt: T0 + i };
          }
        }
        await small.rebuild(p, wipedHalfway());
        expect(await due.needsRebuild(p)).toBe(true);
        expect(await due.size(p)).toBe(10);
        await due.claim(p, T0 + 60_000, 100);
      }
    });

    it('remove finds an entry with or without its due time and drops emptied buckets', async () => {
      const due = index(1000);
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      await due.addMany(p, [
        { id: 'a', dueAt: T0 },
        { id: 'b', dueAt: T0 + 5000 },
        { id: 'c', dueAt: T0 + 5500 },
      ]);
      await due.remove(p, 'a', T0);
      await due.remove(p, 'b');
      await due.remove(p, 'missing');
      expect(await client.zrange(keys.buckets, 0, -1)).toEqual([String(T0 + 5000)]);
      expect(await due.claim(p, T0 + 10_000, 10)).toEqual(['c']);
    });

    it('a listed bucket whose set is gone is dropped by the next claim', async () => {
      const due = index(1000);
      const p = freshPartition();
      const keys = dueIndexKeys(prefix, p);
      await due.addMany(p, [
        { id: 'lost', dueAt: T0 },
        { id: 'kept', dueAt: T0 + 1000 },
      ]);
      await client.del(`${keys.bucketPrefix}${T0}`);
      expect(await due.claim(p, T0 + 2000, 10)).toEqual(['kept']);
      expect(await client.exists(keys.buckets)).toBe(0);
    });
  });
}

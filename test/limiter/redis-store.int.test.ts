/**
 * RedisStore against real servers: the shared conformance suite on standalone Redis and on the
 * 3-master cluster, then what only Redis has: script reload after SCRIPT FLUSH, TTLs on every
 * key, hashed keys, the memory of a log, Redis TIME, and batching.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { Limiter } from '../../src/limiter/limiter.js';
import { scripts } from '../../src/limiter/stores/redis/lua-script.js';
import { RedisStore, type RedisStoreClient } from '../../src/limiter/stores/redis/redis-store.js';
import type { Rule } from '../../src/limiter/types.js';
import { describeWith, servers } from '../support/servers.js';
import { defineStoreConformance } from './conformance.js';
import { LOG_ENCODINGS } from './log-encodings.js';

/** `it` for the encodings a test is about; for the others it is not defined (rather than reported skipped). */
const itFor = (applies: boolean): ((name: string, fn: () => Promise<void>, timeout?: number) => void) => (applies ? it : () => undefined);

/** Keys must outlive the test's explicit clock however slow the machine is: TTLs run on Redis's clock. */
const TEST_MIN_TTL = 600_000;

interface Target {
  name: string;
  variable: string;
  available: unknown;
  connect(): Redis | Cluster;
}

const targets: Target[] = [
  {
    name: 'standalone',
    variable: 'SLUICE_TEST_REDIS_URL',
    available: servers.redisUrl,
    connect: () => new Redis(servers.redisUrl!, { maxRetriesPerRequest: 1 }),
  },
  {
    name: 'cluster',
    variable: 'SLUICE_TEST_REDIS_CLUSTER',
    available: servers.redisCluster,
    connect: () => new Cluster(servers.redisCluster!, { redisOptions: { maxRetriesPerRequest: 1 } }),
  },
];

/** The nodes holding data: the client itself, or every master of a cluster. */
function nodesOf(client: Redis | Cluster): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

async function keysWithPrefix(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of nodesOf(client)) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
  }
  return keys;
}

async function deleteKeys(client: Redis | Cluster, prefix: string): Promise<void> {
  for (const key of await keysWithPrefix(client, prefix)) await client.del(key);
}

for (const target of targets) {
  for (const encoding of LOG_ENCODINGS) {
    const packed = encoding.packedLogMax > 0;
    describeWith(target.available, target.variable, `RedisStore on ${target.name}, ${encoding.name}`, () => {
      const prefix = `test:rs:${randomUUID().slice(0, 8)}`;
      let shared: Redis | Cluster | undefined;
      const client = (): Redis | Cluster => {
        shared ??= target.connect();
        return shared;
      };

      afterAll(async () => {
        if (!shared) return;
        await deleteKeys(shared, prefix);
        shared.disconnect();
      });

      defineStoreConformance(
        `conformance (${target.name})`,
        (clock) => new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix, clock, minTtlMs: TEST_MIN_TTL }),
      );
      // Subjects sharing slots (48 hash-tag groups), batched per slot on a cluster: batches of
      // several subjects per script call in the per-slot form (the default form is per node).
      defineStoreConformance(
        `conformance (${target.name}, 48 slot groups, batched per slot)`,
        (clock) =>
          new RedisStore({
            packedLogMax: encoding.packedLogMax,
            client: client(),
            prefix: `${prefix}:g`,
            clock,
            minTtlMs: TEST_MIN_TTL,
            slotGroups: 48,
            clusterBatches: 'slot',
          }),
      );

      it('reloads its scripts after SCRIPT FLUSH on every node (EVALSHA falls back to EVAL on NOSCRIPT)', async () => {
        const limiter = new Limiter({
          store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix, minTtlMs: TEST_MIN_TTL }),
        });
        const rules: Rule[] = [{ windowMs: 60_000, limit: 1000 }];
        // Subjects spread over many slots, so every master of a cluster runs the script.
        const subjects = Array.from({ length: 48 }, (_, index) => `flush:${randomUUID()}:${index}`);
        await Promise.all(subjects.map((subject) => limiter.check({ subject, rules })));
        const nodes = nodesOf(client());
        // A cluster batches the subjects of each master's slots together, in the cross-slot form.
        const batchSha = client() instanceof Cluster ? scripts.checkBatchPerNode.sha : scripts.checkBatch.sha;
        for (const node of nodes) {
          await node.script('FLUSH');
          expect(await node.script('EXISTS', batchSha)).toEqual([0]);
        }
        const decisions = await Promise.all(subjects.map((subject) => limiter.check({ subject, rules })));
        expect(decisions.map((decision) => decision.counts[0])).toEqual(subjects.map(() => 1));
        for (const node of nodes) expect(await node.script('EXISTS', batchSha)).toEqual([1]);
        // undo and ban load their own scripts the same way.
        const subject = subjects[0]!;
        await limiter.check({ subject, rules, requestId: 'flush-1' });
        for (const node of nodes) await node.script('FLUSH');
        await limiter.undo({ subject, rules, requestId: 'flush-1', at: Date.now() });
        await limiter.ban(subject, 60_000);
        expect((await limiter.check({ subject, rules })).code).toBe('BANNED');
      });

      it('sets a TTL on every key it writes: log = 2 x longest window, counters = longest span, ban = its remaining time', async () => {
        const own = `${prefix}:ttl${randomUUID().slice(0, 4)}`;
        const limiter = new Limiter({ store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix: own }) });
        const rules: Rule[] = [
          { windowMs: 30_000, limit: 1, banMs: 90_000 },
          { windowMs: 40_000, limit: 5, algorithm: 'fixed-window' },
          { windowMs: 50_000, limit: 5, algorithm: 'sliding-counter' },
          { windowMs: 20_000, limit: 5, algorithm: 'token-bucket' },
        ];
        const subjects = Array.from({ length: 10 }, (_, index) => `ttl:${index}`);
        for (const subject of subjects) {
          expect((await limiter.check({ subject, rules, requestId: 'x' })).allowed).toBe(true);
          expect((await limiter.check({ subject, rules })).code).toBe('RATE_LIMITED');
        }
        await limiter.ban('ttl:hand', 45_000);
        const keys = await keysWithPrefix(client(), own);
        // Three keys per checked subject (log, ban, counters), one for the ban set by hand.
        expect(keys).toHaveLength(3 * subjects.length + 1);
        for (const key of keys) {
          const ttl = await client().pttl(key);
          const limit = key.endsWith(':log') || key.endsWith(':plg') ? 2 * 50_000 : key.endsWith(':ctr') ? 11 * 5000 : 90_000;
          // The log's TTL was set when its first entry went in: more than the longest window.
          expect(ttl, key).toBeGreaterThan(key.endsWith(':log') || key.endsWith(':plg') ? 50_000 : 0);
          expect(ttl, key).toBeLessThanOrEqual(limit);
        }
        await deleteKeys(client(), own);
      });

      itFor(!packed)('resets TTLs only when needed: the log when it was empty or lost entries, counters on a new window', async () => {
        const own = `${prefix}:ttl${randomUUID().slice(0, 4)}`;
        const store = new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix: own });
        const limiter = new Limiter({ store });
        const L = 60_000;
        const rules: Rule[] = [
          { windowMs: L, limit: 100 },
          { windowMs: L, limit: 100, algorithm: 'fixed-window' },
        ];
        const subject = 'ttl:policy';
        const { log, counters } = store.keysOf(subject);
        const far = 5_000_000;
        const t0 = Date.UTC(2030, 0, 1);
        const pttl = (key: string) => client().pttl(key);
        // Into an empty log and a new window: both TTLs set.
        expect((await limiter.check({ subject, rules, now: t0 })).allowed).toBe(true);
        expect(await pttl(log)).toBeGreaterThan(L);
        expect(await pttl(log)).toBeLessThanOrEqual(2 * L);
        expect(await pttl(counters)).toBeLessThanOrEqual(L);
        // Marked far out: an admission that trims nothing, into the same window, leaves both alone.
        await client().pexpire(log, far);
        await client().pexpire(counters, far);
        expect((await limiter.check({ subject, rules, now: t0 + 1000 })).allowed).toBe(true);
        expect(await pttl(log)).toBeGreaterThan(2 * L);
        expect(await pttl(counters)).toBeGreaterThan(2 * L);
        // A new fixed window: the counters' TTL is set again; the trim removes the entry at t0: so is the log's.
        expect((await limiter.check({ subject, rules, now: t0 + L + 500 })).allowed).toBe(true);
        expect(await pttl(counters)).toBeLessThanOrEqual(L);
        expect(await pttl(log)).toBeLessThanOrEqual(2 * L);
        // A peek whose trim removes an entry resets the log's TTL too (the oldest entry moved on).
        await client().pexpire(log, far);
        await limiter.peek({ subject, rules, now: t0 + L + 1500 });
        expect(await client().zcard(log)).toBe(1);
        expect(await pttl(log)).toBeLessThanOrEqual(2 * L);
        // So does an undo that removes an entry.
        expect((await limiter.check({ subject, rules, now: t0 + L + 2000, requestId: 'u' })).allowed).toBe(true);
        await client().pexpire(log, far);
        await limiter.undo({ subject, rules, requestId: 'u', at: t0 + L + 2000 });
        expect(await pttl(log)).toBeLessThanOrEqual(2 * L);
        await deleteKeys(client(), own);
      });

      it('a scheduled entry keeps the log until its count time + 2L, also after trims and undos reset the TTL', async () => {
        const own = `${prefix}:sttl${randomUUID().slice(0, 4)}`;
        const store = new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix: own });
        const limiter = new Limiter({ store });
        const L = 60_000;
        const ahead = 3_600_000;
        const rules: Rule[] = [{ windowMs: L, limit: 100 }];
        const subject = 'ttl:scheduled';
        const keys = store.keysOf(subject);
        const { scheduled } = keys;
        const t0 = Date.UTC(2030, 0, 1);
        const pttl = (key: string) => client().pttl(key);
        // The log's key: packed, or the sorted set once it holds more than packedLogMax entries.
        const logKey = async () => ((await client().exists(keys.packed)) ? keys.packed : keys.log);
        expect((await limiter.check({ subject, rules, now: t0 })).allowed).toBe(true);
        expect((await limiter.check({ subject, rules, now: t0 + 10, countAt: t0 + ahead, requestId: 's' })).allowed).toBe(true);
        expect(await pttl(await logKey())).toBeGreaterThan(ahead + L);
        expect(await pttl(scheduled)).toBeGreaterThan(ahead + L);
        // A trim that removes the entry at t0 resets the log's TTL, still past the scheduled entry.
        expect((await limiter.check({ subject, rules, now: t0 + L + 100 })).allowed).toBe(true);
        expect(await pttl(await logKey())).toBeGreaterThan(ahead);
        expect((await limiter.check({ subject, rules, now: t0 + L + 200, requestId: 'u' })).allowed).toBe(true);
        await limiter.undo({ subject, rules, requestId: 'u', at: t0 + L + 200 });
        expect(await pttl(await logKey())).toBeGreaterThan(ahead);
        if (!packed) expect(await client().zrange(keys.log, -1, -1, 'WITHSCORES')).toEqual([expect.any(String), String(t0 + ahead)]);
        await deleteKeys(client(), own);
      });

      it('never writes a subject in clear: keys carry a 16-character hash tag, log members are integers', async () => {
        const own = `${prefix}:clear${randomUUID().slice(0, 4)}`;
        const subject = 'acme:sms:+8613800000000';
        const rules: Rule[] = [
          { windowMs: 60_000, limit: 1, banMs: 60_000 },
          { windowMs: 60_000, limit: 9, algorithm: 'fixed-window' },
        ];
        const plain = new Limiter({ store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix: own }) });
        await plain.check({ subject, rules, requestId: 'order-42' });
        await plain.check({ subject, rules });
        const keys = await keysWithPrefix(client(), own);
        expect(keys).toHaveLength(3);
        for (const key of keys) {
          expect(key).toMatch(new RegExp(`^${own}:\\{[A-Za-z0-9_-]{16}\\}:(plg|log|ban|ctr|sch)$`));
          expect(key).not.toContain('8613800000000');
          expect(key).not.toContain('acme');
        }
        const log = keys.find((key) => key.endsWith(':log'));
        expect(log === undefined).toBe(packed);
        for (const member of log ? await client().zrange(log, 0, -1) : []) {
          expect(member).toMatch(/^-?\d+$/);
          expect(Number(member)).toBe(Number(member) | 0);
        }
        // With a key secret the tag is an HMAC: a different tag, not computable from the subject alone.
        const keyed = new Limiter({
          store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix: own, keySecret: 'k3y' }),
        });
        await keyed.check({ subject, rules });
        const tags = new Set((await keysWithPrefix(client(), own)).map((key) => key.split(':').at(-2)));
        expect(tags.size).toBe(2);
        await deleteKeys(client(), own);
      });

      it('keeps a 50-entry sliding log small (MEMORY USAGE): packed 200 B, with request ids 408 B in a minute, 536 B over a day; a sorted set ≤ 1 KB', async () => {
        const rules: Rule[] = [{ windowMs: 86_400_000, limit: 1000 }];
        const store = new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix });
        const limiter = new Limiter({ store });
        const usage = async (requestId: (index: number) => string | undefined, spacing: number) => {
          const subject = `memory:${randomUUID()}`;
          const start = Date.now() - 50 * spacing;
          for (let index = 0; index < 50; index++) {
            const decision = await limiter.check({ subject, rules, requestId: requestId(index), now: start + index * spacing });
            expect(decision.allowed).toBe(true);
          }
          expect((await limiter.peek({ subject, rules, now: start + 49 * spacing })).counts).toEqual([50]);
          const keys = store.keysOf(subject);
          const key = encoding.packedLogMax >= 50 ? keys.packed : keys.log;
          expect(await client().exists(keys.packed, keys.log)).toBe(1);
          return client().memory('USAGE', key);
        };
        const anonymous = await usage(() => undefined, 997);
        const withIds = await usage(() => randomUUID(), 997);
        const dayIds = await usage(() => randomUUID(), 1_700_000);
        console.log(
          `MEMORY USAGE of a 50-entry log on ${target.name}, ${encoding.name}: ${anonymous} B anonymous, ` +
            `${withIds} B with request ids (49 s), ${dayIds} B with request ids (23 h)`,
        );
        if (encoding.packedLogMax >= 50) {
          // Within a minute the times take 2 bytes, over a day 4; a member 4; 8 B of header, and the
          // key's own 88 B (104 B on a cluster node: its slot bookkeeping).
          const key = target.name === 'cluster' ? 16 : 0;
          expect(anonymous).toBeLessThanOrEqual(200 + key);
          expect(withIds).toBeLessThanOrEqual(408 + key);
          expect(dayIds).toBeLessThanOrEqual(536 + key);
        } else {
          // Anonymous members fit 13 bits (3 B each in the listpack): the log stays in jemalloc's 768 B class.
          expect(anonymous).toBeLessThanOrEqual(900);
          expect(withIds).toBeLessThanOrEqual(1024);
        }
      });

      itFor(encoding.packedLogMax === 256)(
        'reads a sorted-set log of the previous release and packs it; packedLogMax 0 moves it back',
        async () => {
          const own = `${prefix}:upg${randomUUID().slice(0, 4)}`;
          const old = new RedisStore({ client: client(), prefix: own, packedLogMax: 0, minTtlMs: TEST_MIN_TTL });
          const current = new RedisStore({ client: client(), prefix: own, minTtlMs: TEST_MIN_TTL });
          const rules = [{ windowMs: 60_000, limit: 5, banMs: 0, algorithm: 'sliding-log' as const }];
          const subject = 'upgrade:1';
          const keys = current.keysOf(subject);
          const t0 = Date.UTC(2030, 0, 1);
          for (let index = 0; index < 3; index++)
            expect((await old.check({ subject, rules, requestId: `id-${index}`, now: t0 + index })).allowed).toBe(true);
          expect(await client().zcard(keys.log)).toBe(3);
          // First touch by the packed store: the sorted set becomes the packed log, ids and all.
          expect(await current.check({ subject, rules, requestId: 'id-1', now: t0 + 10 })).toMatchObject({ code: 'OK', counts: [3] });
          expect(await client().exists(keys.log)).toBe(0);
          expect(await client().exists(keys.packed)).toBe(1);
          expect(await current.check({ subject, rules, requestId: 'id-3', now: t0 + 11 })).toMatchObject({ code: 'OK', counts: [3] });
          await current.undo({ subject, rules, requestId: 'id-0', at: t0 });
          expect((await current.peek({ subject, rules, now: t0 + 12 })).counts).toEqual([3]);
          // A store with packedLogMax 0 reads the packed log and moves it into the sorted set.
          expect(await old.check({ subject, rules, requestId: 'id-2', now: t0 + 13 })).toMatchObject({ code: 'OK', counts: [3] });
          expect(await client().exists(keys.packed)).toBe(0);
          expect(await client().zcard(keys.log)).toBe(3);
          expect(await old.check({ subject, rules, now: t0 + 14 })).toMatchObject({ code: 'OK', counts: [3] });
          await deleteKeys(client(), own);
        },
      );

      itFor(encoding.packedLogMax === 2)(
        'moves a log into the sorted set past the cap and back when a trim leaves half of it',
        async () => {
          const own = `${prefix}:mv${randomUUID().slice(0, 4)}`;
          const store = new RedisStore({ client: client(), prefix: own, packedLogMax: 2, minTtlMs: TEST_MIN_TTL });
          const rules = [{ windowMs: 1000, limit: 10, banMs: 0, algorithm: 'sliding-log' as const }];
          const subject = 'move:1';
          const keys = store.keysOf(subject);
          const t0 = Date.UTC(2030, 0, 1);
          const at = async () => [await client().exists(keys.packed), await client().exists(keys.log)];
          await store.check({ subject, rules, requestId: 'a', now: t0 });
          await store.check({ subject, rules, now: t0 + 1 });
          expect(await at()).toEqual([1, 0]);
          // The third entry: all three move into the sorted set, the anonymous one with a member of its own.
          expect(await store.check({ subject, rules, requestId: 'c', now: t0 + 2 })).toMatchObject({ code: 'OK', counts: [2] });
          expect(await at()).toEqual([0, 1]);
          expect(await client().zcard(keys.log)).toBe(3);
          expect(await store.check({ subject, rules, requestId: 'a', now: t0 + 3 })).toMatchObject({ code: 'OK', counts: [3] });
          await store.undo({ subject, rules, requestId: 'c', at: t0 + 2 });
          expect((await store.peek({ subject, rules, now: t0 + 4 })).counts).toEqual([2]);
          // At t0 + 1001 the trim removes the rest ('a' at t0, t0 + 1; 'c' was undone): back into a packed log.
          expect(await store.check({ subject, rules, now: t0 + 1001 })).toMatchObject({ code: 'OK', counts: [0] });
          expect(await at()).toEqual([1, 0]);
          expect((await store.peek({ subject, rules, now: t0 + 1002 })).counts).toEqual([1]);
          await deleteKeys(client(), own);
        },
      );

      itFor(encoding.packedLogMax === 256)(
        'moves a packed log of thousands of entries into the sorted set in chunks (9,002 ZADD arguments would overflow the Lua stack)',
        async () => {
          const own = `${prefix}:big${randomUUID().slice(0, 4)}`;
          const store = new RedisStore({ client: client(), prefix: own, packedLogMax: 4500, minTtlMs: TEST_MIN_TTL });
          const rules = [{ windowMs: 3_600_000, limit: 10_000, banMs: 0, algorithm: 'sliding-log' as const }];
          const t0 = Date.UTC(2030, 0, 1);
          const decisions = await Promise.all(
            Array.from({ length: 4501 }, (_, index) =>
              store.check({ subject: 'big:1', rules, requestId: index % 2 ? `id-${index}` : undefined, now: t0 + index }),
            ),
          );
          expect(decisions.map((decision) => decision.counts[0])).toEqual(decisions.map((_, index) => index));
          expect(await client().zcard(store.keysOf('big:1').log)).toBe(4501);
          expect(await store.check({ subject: 'big:1', rules, requestId: 'id-7', now: t0 + 5000 })).toMatchObject({
            code: 'OK',
            counts: [4501],
          });
          await deleteKeys(client(), own);
        },
      );

      it('decides at Redis TIME when no `now` is passed, whatever the process clock says', async () => {
        const limiter = new Limiter({ store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix }) });
        const rules: Rule[] = [{ windowMs: 60_000, limit: 5 }];
        const redisTime = async () => {
          const [seconds, micros] = await nodesOf(client())[0]!.time();
          return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        };
        const before = await redisTime();
        const skewed = before - 3_600_000;
        const spy = vi.spyOn(Date, 'now').mockReturnValue(skewed);
        let decision: Awaited<ReturnType<Limiter['check']>>;
        try {
          decision = await limiter.check({ subject: `time:${randomUUID()}`, rules });
        } finally {
          spy.mockRestore();
        }
        const after = await redisTime();
        // Cluster nodes share this host's clock, so one node's TIME bounds them all.
        expect(decision.at).toBeGreaterThanOrEqual(before - 5);
        expect(decision.at).toBeLessThanOrEqual(after + 5);
      });

      it('batches concurrent decisions into few script calls with the semantics of one call each', async () => {
        const calls = { count: 0 };
        const base = client();
        const counting: RedisStoreClient = {
          isCluster: base instanceof Cluster,
          evalsha: (...args) => {
            calls.count++;
            return base.evalsha(...args);
          },
          eval: (...args) => base.eval(...args),
          del: (...keys) => base.del(...keys),
        };
        const limiter = new Limiter({
          store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: counting, prefix, maxBatch: 64 }),
        });
        const rules: Rule[] = [
          { windowMs: 60_000, limit: 37 },
          { windowMs: 60_000, limit: 45, algorithm: 'fixed-window' },
          { windowMs: 60_000, limit: 40, algorithm: 'token-bucket' },
        ];
        const subjects = Array.from({ length: 5 }, () => `batch:${randomUUID()}`);
        const now = Date.UTC(2030, 0, 1, 0, 0, 30);
        const decisions = await Promise.all(
          Array.from({ length: 500 }, (_, index) => limiter.check({ subject: subjects[index % 5]!, rules, now })),
        );
        for (let s = 0; s < subjects.length; s++) {
          const own = decisions.filter((_, index) => index % 5 === s);
          const admitted = own.filter((decision) => decision.allowed);
          expect(admitted).toHaveLength(37);
          // In issue order: the first 37 admitted with counts 0..36, the rest refused by rule 0.
          expect(own.slice(0, 37).map((decision) => decision.counts[0])).toEqual([...Array(37).keys()]);
          expect(own.slice(37).every((decision) => decision.code === 'RATE_LIMITED' && decision.rule === 0)).toBe(true);
          expect(own.at(-1)!.counts).toEqual([37, 37, 37]);
        }
        // 500 decisions, at most 64 per call; on a cluster one call per slot and batch.
        expect(calls.count).toBeGreaterThanOrEqual(8);
        expect(calls.count).toBeLessThan(base instanceof Cluster ? 60 : 20);
      });

      it('decodes a batch mixing banned checks (no counts) with peeks and counted decisions', async () => {
        const limiter = new Limiter({
          store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix, maxBatch: 64 }),
        });
        const rules: Rule[] = [
          { windowMs: 60_000, limit: 1, banMs: 60_000 },
          { windowMs: 60_000, limit: 9, algorithm: 'fixed-window' },
        ];
        const subject = `mixed:${randomUUID()}`;
        const now = Date.UTC(2030, 0, 1, 0, 0, 30);
        // Issued in one tick: one script call, decided in this order.
        const [first, limited, banned, peeked, retried, bannedAgain] = await Promise.all([
          limiter.check({ subject, rules, now, requestId: 'one' }),
          limiter.check({ subject, rules, now: now + 1 }),
          limiter.check({ subject, rules, now: now + 2 }),
          limiter.peek({ subject, rules, now: now + 3 }),
          limiter.check({ subject, rules, now: now + 4, requestId: 'one' }),
          limiter.check({ subject, rules, now: now + 5, requestId: 'two' }),
        ]);
        expect(first).toEqual({ allowed: true, code: 'OK', retryAfterMs: 0, counts: [0, 0], at: now });
        expect(limited).toEqual({ allowed: false, code: 'RATE_LIMITED', rule: 0, retryAfterMs: 60_000, counts: [1, 1], at: now + 1 });
        expect(banned).toEqual({ allowed: false, code: 'BANNED', retryAfterMs: 59_999, counts: [], at: now + 2 });
        expect(peeked).toEqual({ allowed: false, code: 'BANNED', retryAfterMs: 59_998, counts: [1, 1], at: now + 3 });
        expect(retried).toEqual({ allowed: true, code: 'OK', retryAfterMs: 0, counts: [1, 1], at: now + 4 });
        expect(bannedAgain).toEqual({ allowed: false, code: 'BANNED', retryAfterMs: 59_996, counts: [], at: now + 5 });
      });

      it('rejects when Redis fails (a denial never is an exception) and never closes its client', async () => {
        const broken: RedisStoreClient = {
          evalsha: () => Promise.reject(new Error('connection reset')),
          eval: () => Promise.reject(new Error('connection reset')),
          del: () => Promise.reject(new Error('connection reset')),
        };
        const failing = new Limiter({ store: new RedisStore({ packedLogMax: encoding.packedLogMax, client: broken }) });
        const rules: Rule[] = [{ windowMs: 1000, limit: 1 }];
        await expect(failing.check({ subject: 's', rules })).rejects.toThrow('connection reset');
        await expect(failing.reset('s')).rejects.toThrow('connection reset');
        const store = new RedisStore({ packedLogMax: encoding.packedLogMax, client: client(), prefix });
        await new Limiter({ store }).check({ subject: `close:${randomUUID()}`, rules });
        await store.close();
        expect(await client().ping()).toBe('PONG');
      });
    });
  }
}

/** A client that counts the store's script calls by script, and may claim a slot map of its own. */
function countingClient(base: Redis | Cluster, slots?: readonly string[][]) {
  const calls = new Map<string, number>();
  const count = (sha: string) => calls.set(sha, (calls.get(sha) ?? 0) + 1);
  const refreshes = { count: 0 };
  const client: RedisStoreClient = {
    isCluster: true,
    get slots() {
      return slots ?? (base as Cluster).slots;
    },
    refreshSlotsCache: () => {
      refreshes.count++;
    },
    evalsha: (sha, ...args) => {
      count(sha);
      return base.evalsha(sha, ...args);
    },
    eval: (script, ...args) => base.eval(script, ...args),
    del: (...keys) => base.del(...keys),
  };
  return { client, calls, refreshes, of: (sha: string) => calls.get(sha) ?? 0 };
}

describeWith(servers.redisCluster, 'SLUICE_TEST_REDIS_CLUSTER', 'RedisStore on the cluster: batches per node', () => {
  const prefix = `test:rsn:${randomUUID().slice(0, 8)}`;
  let cluster: Cluster | undefined;
  const connect = async (): Promise<Cluster> => {
    cluster ??= new Cluster(servers.redisCluster!, { redisOptions: { maxRetriesPerRequest: 1 } });
    if (cluster.status !== 'ready') await new Promise((resolve) => cluster!.once('ready', resolve));
    return cluster;
  };
  afterAll(async () => {
    if (!cluster) return;
    await deleteKeys(cluster, prefix);
    cluster.disconnect();
  });
  const rules: Rule[] = [
    { windowMs: 60_000, limit: 1, banMs: 0 },
    { windowMs: 60_000, limit: 5, algorithm: 'fixed-window' },
  ];
  const subjects = (name: string) => Array.from({ length: 300 }, (_, index) => `${name}:${randomUUID()}:${index}`);

  it('sends the concurrent decisions of many slots as one call per master, with the semantics of one call each', async () => {
    const base = await connect();
    const counted = countingClient(base);
    const limiter = new Limiter({ store: new RedisStore({ client: counted.client, prefix, maxBatch: 1000 }) });
    const own = subjects('node');
    const first = await Promise.all(own.map((subject) => limiter.check({ subject, rules, requestId: 'n1' })));
    expect(first.every((decision) => decision.allowed && decision.counts.join() === '0,0')).toBe(true);
    expect(counted.of(scripts.checkBatchPerNode.sha)).toBe(base.nodes('master').length);
    expect(counted.of(scripts.checkBatch.sha)).toBe(0);
    const second = await Promise.all(own.map((subject) => limiter.check({ subject, rules })));
    expect(second.every((decision) => decision.code === 'RATE_LIMITED' && decision.counts.join() === '1,1')).toBe(true);
    // Undos of one turn go per node too, and give back exactly one admission each.
    await Promise.all(own.map((subject, index) => limiter.undo({ subject, rules, requestId: 'n1', at: first[index]!.at })));
    expect(counted.of(scripts.undoPerNode.sha)).toBe(base.nodes('master').length);
    const peeks = await Promise.all(own.map((subject) => limiter.peek({ subject, rules })));
    expect(peeks.every((decision) => decision.counts.join() === '0,0')).toBe(true);
  });

  it('a stale slot map (every slot claimed by one master): the batch writes nothing there and is sent again per slot', async () => {
    const base = await connect();
    const firstMaster = base.slots[0]![0]!;
    const counted = countingClient(
      base,
      base.slots.map(() => [firstMaster]),
    );
    const limiter = new Limiter({ store: new RedisStore({ client: counted.client, prefix, maxBatch: 1000 }) });
    const own = subjects('stale');
    const first = await Promise.all(own.map((subject) => limiter.check({ subject, rules, requestId: 'r1' })));
    // Nothing was counted twice: the refused batch wrote none of the subjects it reached.
    expect(first.every((decision) => decision.allowed && decision.counts.join() === '0,0')).toBe(true);
    expect(counted.refreshes.count).toBeGreaterThanOrEqual(1);
    expect(counted.of(scripts.checkBatch.sha)).toBeGreaterThan(100);
    const again = await Promise.all(own.map((subject) => limiter.peek({ subject, rules })));
    expect(again.every((decision) => decision.counts.join() === '1,1')).toBe(true);
    await Promise.all(own.map((subject, index) => limiter.undo({ subject, rules, requestId: 'r1', at: first[index]!.at })));
    const after = await Promise.all(own.map((subject) => limiter.peek({ subject, rules })));
    expect(after.every((decision) => decision.counts.join() === '0,0')).toBe(true);
  });
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'RedisStore batches per node on a server without cross-slot scripts', () => {
  it('switches to batches per slot for good and decides every batch', async () => {
    const base = new Redis(servers.redisUrl!, { maxRetriesPerRequest: 1 });
    const prefix = `test:rso:${randomUUID().slice(0, 8)}`;
    try {
      // Two pretend masters over one standalone server; the per-node form fails as Redis 6 compiles it.
      const slots = Array.from({ length: 16_384 }, (_, slot) => [slot < 8192 ? '10.0.0.1:6379' : '10.0.0.2:6379']);
      const counted = countingClient(base, slots);
      const refuse = () =>
        Promise.reject(new Error("ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'"));
      const client: RedisStoreClient = {
        ...counted.client,
        slots,
        evalsha: (sha, ...args) => {
          if (sha !== scripts.checkBatchPerNode.sha) return counted.client.evalsha(sha, ...args);
          counted.calls.set(sha, counted.of(sha) + 1);
          return Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.'));
        },
        eval: (script, ...args) => (script.startsWith('#!lua') ? refuse() : base.eval(script, ...args)),
      };
      const limiter = new Limiter({ store: new RedisStore({ client, prefix }) });
      const own = Array.from({ length: 50 }, (_, index) => `old:${index}`);
      for (let round = 0; round < 2; round++) {
        const decisions = await Promise.all(own.map((subject) => limiter.check({ subject, rules: [{ windowMs: 60_000, limit: 5 }] })));
        expect(decisions.map((decision) => decision.counts[0])).toEqual(own.map(() => round));
      }
      // Tried once per pretend master in the first round (sent together), never again.
      expect(counted.of(scripts.checkBatchPerNode.sha)).toBe(2);
    } finally {
      const keys = await base.keys(`${prefix}:*`);
      if (keys.length) await base.del(...keys);
      base.disconnect();
    }
  });
});

describe('RedisStore options', () => {
  it('refuses a prefix with braces (it would move the hash tag) and a bad maxBatch', () => {
    const client = { evalsha: vi.fn(), eval: vi.fn(), del: vi.fn() } as unknown as RedisStoreClient;
    expect(() => new RedisStore({ client, prefix: 'a{b}' })).toThrow(TypeError);
    expect(() => new RedisStore({ client, maxBatch: 0 })).toThrow(RangeError);
    expect(() => new RedisStore({ client, maxBatch: 5000 })).toThrow(RangeError);
    expect(() => new RedisStore({ client, minTtlMs: -1 })).toThrow(RangeError);
    expect(() => new RedisStore({ client, packedLogMax: 10_001 })).toThrow(RangeError);
    expect(() => new RedisStore({ client, packedLogMax: 1.5 })).toThrow(RangeError);
    expect(() => new RedisStore({ client, clusterBatches: 'shard' as 'node' })).toThrow(RangeError);
  });

  it('a ManualClock supplies `now` when a call passes none', async () => {
    const client: RedisStoreClient = {
      evalsha: vi.fn(async (_sha: string, numKeys: number, ...args: (string | number)[]) => {
        // One decision of one rule: header 16·1 + 1 (has now), then the time, last in ARGV.
        expect(numKeys).toBe(5);
        expect(args.at(-2)).toBe(17);
        return [0, -1, 0, Number(args.at(-1)), 0];
      }),
      eval: vi.fn(),
      del: vi.fn(),
    };
    const limiter = new Limiter({ store: new RedisStore({ client, clock: new ManualClock(123_456) }) });
    expect((await limiter.check({ subject: 's', rules: [{ windowMs: 1000, limit: 1 }] })).at).toBe(123_456);
  });
});

/**
 * RedisEventStore on standalone Redis and on the 3-master cluster: the shared conformance suite,
 * then what only Redis has: hashed keys, TTLs, one script call per slot.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { bloomSize } from '../../../src/limiter/events/hashing.js';
import { RedisEventStore } from '../../../src/limiter/events/redis-event-store.js';
import { describeWith, servers } from '../../support/servers.js';
import { defineCheckConformance } from './check-conformance.js';
import { defineEventStoreConformance } from './event-conformance.js';

const targets = [
  { name: 'standalone', variable: 'SLUICE_TEST_REDIS_URL', available: servers.redisUrl, connect: () => new Redis(servers.redisUrl!) },
  {
    name: 'cluster',
    variable: 'SLUICE_TEST_REDIS_CLUSTER',
    available: servers.redisCluster,
    connect: () => new Cluster(servers.redisCluster!),
  },
];

const nodesOf = (client: Redis | Cluster): Redis[] => (client instanceof Cluster ? client.nodes('master') : [client]);

async function keysWithPrefix(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of nodesOf(client)) keys.push(...(await node.keys(`${prefix}:*`)));
  return keys;
}

for (const target of targets) {
  describeWith(target.available, target.variable, `RedisEventStore on ${target.name}`, () => {
    const prefix = `test:ev:${randomUUID().slice(0, 8)}`;
    let shared: Redis | Cluster | undefined;
    const client = () => {
      shared ??= target.connect();
      return shared;
    };
    afterAll(async () => {
      if (!shared) return;
      for (const key of await keysWithPrefix(shared, prefix)) await shared.del(key);
      shared.disconnect();
    });

    defineEventStoreConformance(
      `conformance (${target.name})`,
      () => new RedisEventStore({ client: client(), prefix, keySecret: 'test' }),
      {
        heavy: true,
      },
    );

    if (target.name === 'standalone') {
      defineCheckConformance(
        `decide conformance (${target.name})`,
        () => new RedisEventStore({ client: client(), prefix, keySecret: 'test' }),
        {
          heavy: true,
        },
      );
      it('a window is one packed string with the window as TTL; the request id only as a 4-byte digest', async () => {
        const store = new RedisEventStore({ client: client(), prefix, keySecret: 'test' });
        const subject = `device:${randomUUID()}`;
        const requestId = `req-${randomUUID()}`;
        const op = { kind: 'window', subject, windowMs: 60_000, limit: 3, record: true, member: requestId } as const;
        await store.decide!({ ops: [op], vetoes: [true] }, Date.now());
        const key = `${store.keyBase(subject).base}w`;
        const value = await (client() as Redis).getBuffer(key);
        expect(value!.length).toBe(12);
        expect(value!.toString('latin1')).not.toContain('req-');
        const ttl = await client().pttl(key);
        expect(ttl).toBeGreaterThan(59_000);
        expect(ttl).toBeLessThanOrEqual(60_000);
      });
    } else {
      it('offers no decide on a cluster (a check spans slots)', () => {
        expect(new RedisEventStore({ client: client(), prefix }).decide).toBeUndefined();
      });
    }

    it('keeps values and subjects out of key names and state, and sets a TTL on every key', async () => {
      const store = new RedisEventStore({ client: client(), prefix, keySecret: 'test' });
      const subject = `phone:+8613800000000:${randomUUID()}`;
      const { bits, hashes } = bloomSize(10, 0.001);
      await store.apply(
        [
          { kind: 'last-n', subject, n: 5, m: 3, outcome: 'fail', push: 'fail' },
          { kind: 'distinct', subject, windowMs: 60_000, limit: 3, value: '+8613900000000', record: true },
          { kind: 'seen', subject, bits, hashes, value: 'device-abc', record: true, windowMs: 60_000 },
        ],
        Date.now(),
      );
      const { base } = store.keyBase(subject);
      const keys = (await keysWithPrefix(client(), prefix)).filter((key) => key.startsWith(base));
      expect(keys.length).toBe(3);
      for (const key of keys) {
        expect(key).not.toMatch(/8613|device/);
        expect(await client().pttl(key)).toBeGreaterThan(0);
      }
      const members = await client().zrange(`${base}d`, 0, -1);
      expect(members[0]).toMatch(/^\d+$/);
    });

    it('sends the ops of one turn as one script call per slot', async () => {
      const c = client();
      const store = new RedisEventStore({ client: c, prefix, keySecret: 'test' });
      const subjects = Array.from({ length: 30 }, () => randomUUID());
      const slots = new Set(subjects.map((s) => store.keyBase(s).slot));
      const calls: number[] = [];
      const original = c.evalsha.bind(c);
      (c as { evalsha: unknown }).evalsha = (...args: Parameters<typeof original>) => {
        calls.push(1);
        return original(...args);
      };
      try {
        await store.apply(
          subjects.map((subject) => ({ kind: 'last-n' as const, subject, n: 5, m: 3, outcome: 'fail' })),
          Date.now(),
        );
      } finally {
        (c as { evalsha: unknown }).evalsha = original;
      }
      expect(calls.length).toBe(target.name === 'cluster' ? slots.size : 1);
    });
  });
}

/**
 * RedisLeaseLock in one process, against the shared standalone Redis and the shared Cluster
 * (one suite, both backends; unique key prefixes). Process races live in
 * redis-lease-lock-processes.int.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LockClient, LockEvent } from '../../../src/infra/lock/redis-lease-lock.js';
import { createRedisLockFactory, RedisLeaseLock } from '../../../src/infra/lock/redis-lease-lock.js';
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `condition` every 10 ms; false after `timeoutMs`. */
async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await sleep(10);
  }
  return condition();
}

for (const backend of BACKENDS) {
  describeWith(backend.available, backend.variable, `RedisLeaseLock (${backend.name})`, () => {
    let client: Client;
    const prefix = `test:${randomUUID()}:`;

    beforeAll(() => {
      client = backend.connect();
    });
    afterAll(async () => {
      client.disconnect();
    });

    const lock = (name: string, extra: Partial<ConstructorParameters<typeof RedisLeaseLock>[0]> = {}) =>
      new RedisLeaseLock({ client, name, keyPrefix: prefix, leaseMs: 600, ...extra });

    it('one holder at a time; release hands over', async () => {
      const a = lock('one');
      const b = lock('one');
      expect(await a.tryAcquire()).toBe(true);
      expect(await a.tryAcquire()).toBe(true); // already held: still true
      expect(await b.tryAcquire()).toBe(false);
      expect(a.isHeld()).toBe(true);
      expect(b.isHeld()).toBe(false);
      expect(await client.get(a.key)).toMatch(new RegExp(`:${process.pid}:[0-9a-f]{24}$`));
      await a.release();
      expect(a.isHeld()).toBe(false);
      expect(await client.exists(a.key)).toBe(0);
      expect(await b.tryAcquire()).toBe(true);
      await b.release();
    });

    it('the watchdog keeps the lock well past one lease', async () => {
      const a = lock('renewed', { leaseMs: 300 });
      const b = lock('renewed', { leaseMs: 300 });
      expect(await a.tryAcquire()).toBe(true);
      await sleep(1000);
      expect(a.isHeld()).toBe(true);
      expect(await b.tryAcquire()).toBe(false);
      expect(await client.pttl(a.key)).toBeGreaterThan(0);
      await a.release();
    });

    it('release by a non-owner never deletes the owner key', async () => {
      const a = lock('foreign');
      const b = lock('foreign');
      expect(await a.tryAcquire()).toBe(true);
      await b.release();
      expect(await b.tryAcquire()).toBe(false);
      expect(await client.exists(a.key)).toBe(1);
      await a.release();
    });

    it('isHeld turns false once the lease has passed on the monotonic clock, even with no timer fired', async () => {
      let skewMs = 0;
      const events: LockEvent[] = [];
      const a = lock('paused', { leaseMs: 5000, monotonicNow: () => performance.now() + skewMs, onEvent: (e) => events.push(e) });
      const seen: boolean[] = [];
      a.onLost(() => seen.push(a.isHeld()));
      expect(await a.tryAcquire()).toBe(true);
      skewMs = 5000; // as if the process had been stopped for a whole lease
      expect(a.isHeld()).toBe(false);
      expect(seen).toEqual([false]); // fired synchronously, already not held
      expect(events.filter((e) => e.type === 'lost')).toEqual([{ type: 'lost', name: 'paused', reason: 'lease-expired' }]);
      // The key still carried our token in Redis: it is given back so nobody waits out the lease.
      expect(await eventually(async () => (await client.exists(a.key)) === 0, 2000)).toBe(true);
      expect(a.isHeld()).toBe(false);
      expect(seen).toHaveLength(1);
    });

    it('a renewal that finds another owner loses the lock and leaves the other owner alone', async () => {
      const events: LockEvent[] = [];
      const a = lock('stolen', { onEvent: (e) => events.push(e) });
      let lost = 0;
      const unsubscribeSecond = a.onLost(() => {
        lost += 100;
      });
      a.onLost(() => {
        lost += 1;
      });
      unsubscribeSecond();
      expect(await a.tryAcquire()).toBe(true);
      await client.set(a.key, 'someone-else', 'PX', 10_000);
      expect(await eventually(() => lost > 0, 2000)).toBe(true);
      expect(lost).toBe(1);
      expect(a.isHeld()).toBe(false);
      expect(events.find((e) => e.type === 'lost')).toEqual({ type: 'lost', name: 'stolen', reason: 'renewal-refused' });
      expect(await client.get(a.key)).toBe('someone-else');
      await a.release();
      expect(await client.get(a.key)).toBe('someone-else');
      await client.del(a.key);
    });

    it('renewal errors are retried; the lock is lost when the lease runs out without a renewal', async () => {
      const events: LockEvent[] = [];
      const failingRenewals: LockClient = {
        set: (...args) => client.set(...args),
        evalsha: () => Promise.reject(new Error('connection reset')),
        eval: () => Promise.reject(new Error('connection reset')),
      };
      const a = new RedisLeaseLock({
        client: failingRenewals,
        name: 'flaky',
        keyPrefix: prefix,
        leaseMs: 300,
        onEvent: (e) => events.push(e),
      });
      let lostAt = 0;
      a.onLost(() => {
        lostAt = performance.now();
      });
      const acquiredAt = performance.now();
      expect(await a.tryAcquire()).toBe(true);
      expect(await eventually(() => lostAt > 0, 3000)).toBe(true);
      expect(lostAt - acquiredAt).toBeGreaterThanOrEqual(300 - 10);
      expect(events.filter((e) => e.type === 'renewal-error').length).toBeGreaterThanOrEqual(2);
      expect(events.find((e) => e.type === 'lost')).toMatchObject({ reason: 'lease-expired' });
      await client.del(a.key);
    });

    it('an acquire whose answer was lost is reclaimed by the next attempt, not left to a whole lease', async () => {
      // The SET runs, its reply never arrives: what a timed-out command still queued in the client
      // does when the connection comes back.
      let loseReply = true;
      const lostReply: LockClient = {
        set: async (...args) => {
          const reply = await client.set(...args);
          if (!loseReply) return reply;
          loseReply = false;
          throw new Error('Command timed out');
        },
        evalsha: (...args) => client.evalsha(...args),
        eval: (...args) => client.eval(...args),
      };
      const a = new RedisLeaseLock({ client: lostReply, name: 'lost-reply', keyPrefix: prefix, leaseMs: 10_000 });
      const b = lock('lost-reply');
      await expect(a.tryAcquire()).rejects.toThrow('Command timed out');
      expect(await client.get(a.key)).toMatch(/:/); // the key is taken, under a's token
      expect(await b.tryAcquire()).toBe(false);
      // Before: a's next SET NX found the key taken and a waited the whole lease, as did everyone.
      expect(await a.tryAcquire()).toBe(true);
      expect(await client.pttl(a.key)).toBeGreaterThan(9000);
      await a.release();
      expect(await client.exists(a.key)).toBe(0);
    });

    it('the factory builds independent locks per name, and rejects names that would break the hash tag', async () => {
      const factory = createRedisLockFactory({ client, keyPrefix: prefix, leaseMs: 600 });
      const sms = factory.createLock('dispatch:sms:0');
      const email = factory.createLock('dispatch:email:0');
      expect(await sms.tryAcquire()).toBe(true);
      expect(await email.tryAcquire()).toBe(true);
      expect(await factory.createLock('dispatch:sms:0').tryAcquire()).toBe(false);
      await Promise.all([sms.release(), email.release()]);
      expect(() => factory.createLock('a{b}')).toThrow(/invalid lock name/);
      expect(() => new RedisLeaseLock({ client, name: 'x', leaseMs: 100, renewEveryMs: 100 })).toThrow(/renewEveryMs/);
    });
  });
}

import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { InProcessChangeBus, RedisChangeBus } from '../../src/infra/change-bus.js';
import { LiveCache } from '../../src/infra/live-cache.js';
import { ManualClock } from '../../src/limiter/index.js';
import { sleep, waitFor } from '../delivery/delivery-support.js';
import { describeWith, servers } from '../support/servers.js';

/** A source of truth standing in for SQL: a map, and a count of loads. */
function source(initial: Record<string, string>) {
  const data = new Map(Object.entries(initial));
  const calls = { loads: 0 };
  let gate: Promise<void> | undefined;
  return {
    data,
    calls,
    /** Makes the next loads wait until the returned function is called. */
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return () => {
        gate = undefined;
        release();
      };
    },
    load: async (key: string) => {
      calls.loads++;
      const value = data.get(key);
      if (gate) await gate;
      return value;
    },
  };
}

describe('LiveCache in process', () => {
  it('serves from the local level until its TTL, then reloads', async () => {
    const clock = new ManualClock(1000);
    const sql = source({ a: 'one' });
    const cache = new LiveCache<string>({ name: 't', load: sql.load, localTtlMs: 5000, clock, bus: new InProcessChangeBus() });
    expect(await cache.get('a')).toBe('one');
    sql.data.set('a', 'two');
    expect(await cache.get('a')).toBe('one');
    clock.advance(5000);
    expect(await cache.get('a')).toBe('two');
    expect(sql.calls.loads).toBe(2);
  });

  it('an invalidation reaches every cache on the bus at once, and unknown keys are cached too', async () => {
    const clock = new ManualClock(0);
    const bus = new InProcessChangeBus();
    const sql = source({ a: 'one' });
    const first = new LiveCache<string>({ name: 't', load: sql.load, localTtlMs: 60_000, clock, bus });
    const second = new LiveCache<string>({ name: 't', load: sql.load, localTtlMs: 60_000, clock, bus });
    expect(await first.get('a')).toBe('one');
    expect(await second.get('a')).toBe('one');
    expect(await second.get('missing')).toBeUndefined();
    expect(await second.get('missing')).toBeUndefined();
    expect(sql.calls.loads).toBe(3);
    sql.data.set('a', 'two');
    await first.invalidate('a');
    expect(await second.get('a')).toBe('two');
  });

  it('concurrent misses share one load, and a load begun before an invalidation is not kept after it', async () => {
    const clock = new ManualClock(0);
    const sql = source({ a: 'old' });
    const cache = new LiveCache<string>({ name: 't', load: sql.load, localTtlMs: 60_000, clock, bus: new InProcessChangeBus() });
    const release = sql.hold();
    const loads = [cache.get('a'), cache.get('a')];
    sql.data.set('a', 'new');
    await cache.invalidate('a');
    release();
    expect(await Promise.all(loads)).toEqual(['old', 'old']);
    expect(sql.calls.loads).toBe(1);
    expect(await cache.get('a')).toBe('new');
  });
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'LiveCache with Redis', () => {
  const redis = new Redis(servers.redisUrl!);
  afterAll(() => redis.quit());

  it('a slow reader cannot plant a stale value in Redis after a change', async () => {
    const clock = new ManualClock(0);
    const name = `t${Date.now()}${Math.random().toString(36).slice(2)}`;
    const sql = source({ a: 'old' });
    const bus = new RedisChangeBus(redis, `test:${name}`);
    await bus.whenReady();
    const slow = new LiveCache<string>({ name, load: sql.load, localTtlMs: 60_000, clock, bus, redis });
    const release = sql.hold();
    const stale = slow.get('a'); // loads "old" from SQL, and will write it to Redis late
    await new Promise((resolve) => setTimeout(resolve, 20));
    sql.data.set('a', 'new');
    const writer = new LiveCache<string>({ name, load: sql.load, localTtlMs: 60_000, clock, bus: new InProcessChangeBus(), redis });
    await writer.invalidate('a');
    release();
    expect(await stale).toBe('old');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A third instance reads through Redis: the late "old" carries the previous version, so it is refused.
    const reader = new LiveCache<string>({ name, load: sql.load, localTtlMs: 60_000, clock, bus: new InProcessChangeBus(), redis });
    expect(await reader.get('a')).toBe('new');
    await bus.close();
  });

  it('the Redis level answers a second instance without SQL', async () => {
    const clock = new ManualClock(0);
    const name = `t${Date.now()}${Math.random().toString(36).slice(2)}`;
    const sql = source({ a: 'value' });
    const hits: string[] = [];
    const make = () =>
      new LiveCache<string>({
        name,
        load: sql.load,
        localTtlMs: 60_000,
        clock,
        bus: new InProcessChangeBus(),
        redis,
        stats: { lookup: (level, result) => result === 'hit' && level !== 'local' && hits.push(level) },
      });
    expect(await make().get('a')).toBe('value');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await make().get('a')).toBe('value');
    expect(hits).toEqual(['sql', 'redis']);
    expect(sql.calls.loads).toBe(1);
  });
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'LiveCache when Redis cannot be reached for a change', () => {
  it('a change is not a failure; the writer reads SQL meanwhile; the retried invalidation reaches the other instances', async () => {
    const clock = new ManualClock(0);
    const name = `t${Date.now()}${Math.random().toString(36).slice(2)}`;
    const sql = source({ a: 'old' });
    // The writer's own connection fails while the other instance's works: the invalidation is
    // lost for good (not merely late, as a command queued to a frozen server would be).
    const writerClient = new Redis(servers.redisUrl!, { maxRetriesPerRequest: 1 });
    const otherClient = new Redis(servers.redisUrl!);
    const writerBus = new RedisChangeBus(writerClient, `test:${name}`);
    const otherBus = new RedisChangeBus(otherClient, `test:${name}`);
    await Promise.all([writerBus.whenReady(), otherBus.whenReady()]);
    const failures: string[] = [];
    const make = (redis: Redis, bus: RedisChangeBus) =>
      new LiveCache<string>({
        name,
        load: sql.load,
        // Long: only an invalidation on the bus can make the other instance read again.
        localTtlMs: 60_000,
        clock,
        bus,
        redis,
        onInvalidateError: (_error, key) => failures.push(key),
      });
    const writer = make(writerClient, writerBus);
    const other = make(otherClient, otherBus);
    try {
      // A first change, shared: the key's Redis version is 1 from here on.
      await writer.invalidate('a');
      expect(await writer.get('a')).toBe('old');
      await sleep(50); // the Redis level holds "old" (version 1)
      expect(await other.get('a')).toBe('old');

      writerClient.disconnect();
      sql.data.set('a', 'new');
      await writer.invalidate('a'); // resolves: SQL holds the change
      expect(failures).toEqual(['a']);
      await writerClient.connect();

      // Redis's level still holds "old" under version 1; the writer does not read it back.
      expect(await writer.get('a')).toBe('new');
      expect(await other.get('a')).toBe('old');
      // Within the retry's second, the change is announced: the other instance drops its copy.
      expect(await waitFor(async () => (await other.get('a')) === 'new', 5000)).toBe(true);
    } finally {
      await writer.close();
      await other.close();
      await writerBus.close();
      await otherBus.close();
      writerClient.disconnect();
      otherClient.disconnect();
    }
  });

  it('a change still unannounced when the cache closes (a CLI command ending) is reported, not left to a retry that never comes', async () => {
    const name = `t${Date.now()}${Math.random().toString(36).slice(2)}`;
    const client = new Redis(servers.redisUrl!, { maxRetriesPerRequest: 1 });
    const bus = new RedisChangeBus(client, `test:${name}`);
    await bus.whenReady();
    const unannounced: string[][] = [];
    const cache = new LiveCache<string>({
      name,
      load: source({ a: 'x' }).load,
      localTtlMs: 60_000,
      clock: new ManualClock(0),
      bus,
      redis: client,
      onUnannounced: (keys) => unannounced.push(keys),
    });
    try {
      client.disconnect();
      await cache.invalidate('a');
      await cache.close();
      expect(unannounced).toEqual([['a']]);
    } finally {
      await bus.close();
      client.disconnect();
    }
  });
});

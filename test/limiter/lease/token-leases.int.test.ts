/**
 * Token leases against a real Redis: blocks are leased and spent in process, sized to the rate,
 * given back on close; the total admitted never exceeds what the exact bucket admits.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TokenLeases } from '../../../src/limiter/lease/token-leases.js';
import { Limiter } from '../../../src/limiter/limiter.js';
import { RedisStore } from '../../../src/limiter/stores/redis/redis-store.js';
import { describeWith, servers } from '../../support/servers.js';

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'token leases', () => {
  let client: Redis;
  const prefix = `test:lease:${randomUUID().slice(0, 8)}`;

  beforeAll(() => {
    client = new Redis(servers.redisUrl!);
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length) await client.del(...keys);
    client.disconnect();
  });

  const make = (leaseMs = 1_000) => {
    const leases = new TokenLeases({ client, prefix: `${prefix}:lease`, leaseMs });
    return { leases, limiter: new Limiter({ store: new RedisStore({ client, prefix }), leases }) };
  };

  it('a hot subject costs one script call per block, and admits no more than the bucket holds', async () => {
    const { leases, limiter } = make();
    const rules = [{ windowMs: 1_000, limit: 1_000, algorithm: 'token-bucket' as const, lease: true }];
    let admitted = 0;
    for (let round = 0; round < 20; round++) {
      const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.check({ subject: 'hot', rules })));
      admitted += decisions.filter((decision) => decision.allowed).length;
    }
    // 2,000 checks within well under a second: a burst of 1,000 plus what refills meanwhile.
    expect(admitted).toBeGreaterThanOrEqual(1_000);
    expect(admitted).toBeLessThan(1_300);
    expect(leases.calls).toBeLessThan(60);
    expect(leases.hits).toBeGreaterThan(1_500);
    await limiter.close();
  });

  it('gives unused tokens back on close, and an undo returns its token to the block', async () => {
    const rules = [{ windowMs: 10_000, limit: 100, algorithm: 'token-bucket' as const, lease: true }];
    const first = make(5_000);
    for (let i = 0; i < 30; i++) expect((await first.limiter.check({ subject: 'back', rules })).allowed).toBe(true);
    const held = first.leases.held;
    const d = await first.limiter.check({ subject: 'back', rules });
    await first.limiter.undo({ subject: 'back', rules, at: d.at });
    expect(first.leases.held).toBe(held);
    await first.limiter.close();
    // 30 spent (the undone one given back): another instance gets exactly the other 70 now.
    const second = make(5_000);
    const decisions = await Promise.all(Array.from({ length: 100 }, () => second.limiter.check({ subject: 'back', rules })));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(70);
    expect(decisions.find((decision) => !decision.allowed)).toMatchObject({ code: 'RATE_LIMITED', rule: 0 });
    await second.limiter.close();
  });

  it('validates: lease only on token buckets without a ban, on every rule of a set or none', async () => {
    const { limiter } = make();
    await expect(limiter.check({ subject: 'x', rules: [{ windowMs: 1000, limit: 1, lease: true }] })).rejects.toThrow(RangeError);
    await expect(
      limiter.check({ subject: 'x', rules: [{ windowMs: 1000, limit: 1, banMs: 5, algorithm: 'token-bucket', lease: true }] }),
    ).rejects.toThrow(RangeError);
    await expect(
      limiter.check({
        subject: 'x',
        rules: [
          { windowMs: 1000, limit: 1, algorithm: 'token-bucket', lease: true },
          { windowMs: 1000, limit: 1, algorithm: 'token-bucket' },
        ],
      }),
    ).rejects.toThrow(RangeError);
    await limiter.close();
  });
});

/**
 * The due index is rebuildable: on a private redis-server (this test runs FLUSHALL), 1,000 entries
 * are wiped and rebuilt from their source list, and every id is then claimable exactly once.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisDueIndex } from '../../../src/delivery/due-index/redis-due-index.js';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../../support/private-redis.js';
import { describeWith } from '../../support/servers.js';

const T0 = Date.UTC(2026, 4, 5, 18, 0, 0);

describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'RedisDueIndex after FLUSHALL', () => {
  let server: PrivateRedis;
  let client: Redis;

  beforeAll(async () => {
    server = await startPrivateRedis();
    client = new Redis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  it('rebuild after FLUSHALL makes every id claimable exactly once', async () => {
    const due = new RedisDueIndex({ client });
    const source = Array.from({ length: 1000 }, (_, i) => ({
      id: `m${String(i).padStart(6, '0')}`,
      tenantId: `t${i % 7}`,
      dueAt: T0 + i * 500,
    }));
    expect(await due.rebuild('sms:0', source)).toBe(1000);
    expect(await due.needsRebuild('sms:0')).toBe(false);
    await client.flushall();
    expect(await due.needsRebuild('sms:0')).toBe(true); // a dispatcher sees this on its next tick
    expect(await due.size('sms:0')).toBe(0);
    expect(await due.claim('sms:0', T0 + 10_000_000, 100)).toEqual([]);
    // FLUSHALL keeps the script cache, a restarted server would not: drop it so the rebuild also
    // goes through the EVAL fallback.
    await client.script('FLUSH');

    expect(await due.rebuild('sms:0', source)).toBe(1000);
    expect(await due.needsRebuild('sms:0')).toBe(false);
    expect(await due.size('sms:0')).toBe(1000);
    const claimed: string[] = [];
    for (let round = 0; round < 100; round++) {
      const ids = await due.claim('sms:0', T0 + 10_000_000, 64);
      if (ids.length === 0) break;
      claimed.push(...ids);
    }
    // Exactly once each (in round-robin order over the seven tenants, each tenant's in due order).
    expect([...claimed].sort()).toEqual(source.map((e) => e.id));
    expect(claimed.filter((id) => source[Number(id.slice(1))]!.tenantId === 't3')).toEqual(
      source.filter((e) => e.tenantId === 't3').map((e) => e.id),
    );
    expect(await client.dbsize()).toBe(1); // only the rebuild marker is left
  });
});

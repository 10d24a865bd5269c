/**
 * A batch through the chain on Redis + SQLite: its messages' frequency decisions leave in one
 * script call (one per hash slot; a standalone server is one slot group) and their rows are
 * written in one group commit, however many messages it holds (issue 28, item 3).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../support/private-redis.js';
import { describeWith } from '../support/servers.js';
import { startApp, type TestApp } from './support.js';

const SEED_RULES = [
  { windowSeconds: 60, limit: 3, banSeconds: 600 },
  { windowSeconds: 3600, limit: 10, banSeconds: 600 },
  { windowSeconds: 86_400, limit: 50, banSeconds: 600 },
];

/** Script calls the server has run so far (EVALSHA and EVAL, NOSCRIPT retries included). */
async function scriptCalls(client: Redis): Promise<number> {
  const stats = await client.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'a batch on Redis + SQLite', () => {
  let redis: PrivateRedis;
  let client: Redis;
  let t: TestApp;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    client = new Redis(redis.url);
    t = await startApp({ SLUICE_REDIS_URL: redis.url, SLUICE_REDIS_KEY_PREFIX: 'batcht:' });
  });
  afterAll(async () => {
    await t?.close();
    client?.disconnect();
    await redis?.stop();
  });

  it('admits 100 messages with one limiter script call and one group commit', async () => {
    const tenant = await t.createTenant();
    expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, { rules: SEED_RULES })).statusCode).toBe(200);
    // A single send first: the script is loaded and the tenant's config cached before counting.
    expect((await t.send(tenant.apiKey, { channel: 'sms', to: '+8613900000000', body: 'warm' })).statusCode).toBe(202);
    const callsBefore = await scriptCalls(client);
    const commitsBefore = { ...t.runtime.repositories.messages.groupCommitStats };

    const messages = Array.from({ length: 100 }, (_, i) => ({ channel: 'sms', to: `+86139${String(i + 1).padStart(8, '0')}`, body: 'x' }));
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/messages/batch',
      headers: { authorization: `Bearer ${tenant.apiKey}` },
      payload: { messages },
    });

    expect(response.statusCode).toBe(200);
    const results = response.json().results as { id?: string }[];
    expect(results.filter((result) => result.id !== undefined)).toHaveLength(100);
    expect((await scriptCalls(client)) - callsBefore).toBe(1);
    const commits = t.runtime.repositories.messages.groupCommitStats;
    expect(commits.transactions - commitsBefore.transactions).toBe(1);
    expect(commits.items - commitsBefore.items).toBe(100);
  });
});

/**
 * The ban lookup on Redis: the counts and the ban as the Redis store holds them, on Redis's clock,
 * and a peek that leaves every key of the limiter as it was.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith, servers } from '../support/servers.js';
import { expectError, phone, sms, startApp, type TestApp } from './support.js';

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'the ban lookup on Redis', () => {
  const prefix = `lookups${process.pid}x${Math.random().toString(36).slice(2, 8)}:`;
  let t: TestApp;
  let client: Redis;
  beforeAll(async () => {
    t = await startApp({ SLUICE_REDIS_URL: servers.redisUrl!, SLUICE_REDIS_KEY_PREFIX: prefix });
    client = new Redis(servers.redisUrl!);
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
    await t?.close();
  });

  /** Every limiter key and its serialised value: what a peek must not change. */
  const limiterState = async () => {
    const keys = (await client.keys(`${prefix}limiter*`)).sort();
    return Promise.all(keys.map(async (key) => [key, (await client.dumpBuffer(key))?.toString('base64')]));
  };

  it("peeks the Redis store's counts and ban, changing no key, per tenant", async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const rules = { rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }] };
    for (const tenant of [a, b]) expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, rules)).statusCode).toBe(200);
    const to = phone(151);
    const url = (tenant: string) => `/v1/admin/tenants/${tenant}/bans/sms/${encodeURIComponent(to)}`;

    for (let i = 0; i < 3; i++) expect((await t.send(a.apiKey, sms(to))).statusCode).toBe(202);
    const before = await limiterState();
    expect(before.length).toBeGreaterThan(0);
    const peek = await t.admin('GET', url(a.id));
    expect(peek.statusCode, peek.body).toBe(200);
    expect(peek.json()).toMatchObject({ recipient: to, banned: false, allowed: false, rules: [{ count: 3, limit: 3 }] });
    expect(await limiterState()).toEqual(before);

    expectError(await t.send(a.apiKey, sms(to)), 429, 'RATE_LIMITED');
    const banned = (await t.admin('GET', url(a.id))).json();
    expect(banned.banned).toBe(true);
    // On Redis's clock: the ban ends 600 s after the decision that imposed it.
    const left = Date.parse(banned.bannedUntil) - Date.parse(banned.at);
    expect(left).toBe(banned.retryAfterMs);
    expect(left).toBeGreaterThan(590_000);
    expect(left).toBeLessThanOrEqual(600_000);

    expect((await t.admin('GET', url(b.id))).json()).toMatchObject({ banned: false, allowed: true, rules: [{ count: 0 }] });
    expect((await t.admin('DELETE', url(a.id))).json()).toEqual({ lifted: true });
    expect((await t.admin('GET', url(a.id))).json()).toMatchObject({ banned: false, bannedUntil: null });
  });
});

/**
 * Risk control with Redis, through app.inject(): the OTP set decided in Redis with no dimension
 * value in any key, then, with Redis stopped, decided by the fallback (`local`) and marked
 * `degraded: true`, never a 5xx.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../support/private-redis.js';
import { describeWith } from '../support/servers.js';
import { expectEventsDeduplicated } from './risk-dedupe.js';
import { startApp, type TestApp } from './support.js';

const RULES = [
  { name: 'codes-per-phone', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 3 },
  { name: 'phones-per-device', kind: 'distinct', key: ['device'], of: 'phone', windowSeconds: 3600, limit: 3 },
  { name: 'new-device', kind: 'seen', key: ['user'], of: 'device', effect: 'review' },
  { name: 'failed-verifications', kind: 'last-n', key: ['user'], n: 5, m: 3, outcome: 'failed' },
];

describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'risk control on Redis, and while Redis is down', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  let stopped = false;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    t = await startApp({ SLUICE_REDIS_URL: redis.url, SLUICE_REDIS_KEY_PREFIX: 'riskt:' });
  });
  afterAll(async () => {
    // With its Redis gone the runtime's client would wait to reconnect: bound the close.
    await Promise.race([t?.close(), new Promise((resolve) => setTimeout(resolve, 5000))]);
    if (!stopped) await redis?.stop();
  }, 20_000);

  it('a repeated requestId of an event records nothing in Redis and still answers 202', async () => {
    await expectEventsDeduplicated(t);
  }, 30_000);

  it('decides in Redis with hashed keys, then degrades to the local fallback with degraded: true', async () => {
    const tenant = await t.createTenant();
    expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/otp`, { rules: RULES })).statusCode).toBe(200);
    const dims = { phone: '+8613800000042', device: 'device-secret-42', user: 'user-secret-42' };
    const check = () => t.call(tenant.apiKey, 'POST', '/v1/risk/check', { action: 'otp', dimensions: dims });
    expect((await check()).json()).toMatchObject({ decision: 'review' });
    expect((await check()).json()).toEqual({ allowed: true, decision: 'allow', reasons: [] });
    expect(
      (await t.call(tenant.apiKey, 'POST', '/v1/risk/events', { action: 'otp', dimensions: dims, outcome: 'failed' })).statusCode,
    ).toBe(202);

    const client = new Redis(redis.url);
    const keys = await client.keys('riskt:*');
    client.disconnect();
    expect(keys.some((key) => key.startsWith('riskt:risk:{'))).toBe(true);
    for (const key of keys) expect(key).not.toMatch(/8613800000042|secret-42/);

    await redis.stop();
    stopped = true;
    const degraded = await check();
    expect(degraded.statusCode, degraded.body).toBe(200);
    // The local store has never seen this device: the fallback judges by what it holds.
    expect(degraded.json()).toMatchObject({ allowed: true, decision: 'review', degraded: true });
  }, 60_000);
});

/**
 * SMS pumping protection with Redis (the limiter's counts, the live caches' shared tier), through
 * app.inject(): the scenarios of fraud-scenarios.ts as in process, and no number or prefix in
 * clear in a Redis key.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith, servers } from '../support/servers.js';
import {
  attackIsRefused,
  batchIsJudgedPerMessage,
  countriesAndSafeList,
  feedbackIsIsolated,
  laterRefusalGivesVelocityBack,
  monitorRecordsTheAttack,
  prefixVelocityHolds,
  setPrices,
  spendCapHolds,
} from './fraud-scenarios.js';
import { startApp, type TestApp } from './support.js';

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'SMS pumping protection on Redis', () => {
  const prefix = `fraudt-${randomUUID().slice(0, 8)}:`;
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ SLUICE_REDIS_URL: servers.redisUrl!, SLUICE_REDIS_KEY_PREFIX: prefix });
    await setPrices(t);
  });
  afterAll(() => t.close());

  it(
    'refuses a pumping attack on one range after at most the limit; ordinary confirmed traffic passes throughout',
    () => attackIsRefused(t),
    120_000,
  );
  it('holds a prefix velocity exactly', () => prefixVelocityHolds(t), 120_000);
  it(
    'in monitor mode accepts the attack, and counts and writes down what it would have refused',
    () => monitorRecordsTheAttack(t),
    120_000,
  );
  it(
    'holds the monthly spend cap exactly under concurrency; a cancel gives back, once; a later refusal takes nothing',
    () => spendCapHolds(t),
    60_000,
  );
  it('gives the prefix velocity back when a later step refuses', () => laterRefusalGivesVelocityBack(t));
  it('judges each message of a batch', () => batchIsJudgedPerMessage(t));
  it("answers another tenant's feedback 404; a repeat is idempotent; batch messages take it", () => feedbackIsIsolated(t));
  it('refuses a country off the list, even for a safe number; the safe list skips velocity', () => countriesAndSafeList(t));

  it('keeps no number, prefix or country in clear in a Redis key', async () => {
    const client = new Redis(servers.redisUrl!);
    try {
      const keys = await client.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(key).not.toMatch(/447400|86139|:GB|:p:|:c:/);
    } finally {
      client.disconnect();
    }
  });
});

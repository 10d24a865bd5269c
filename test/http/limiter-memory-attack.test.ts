/**
 * The eviction attack on the embedded default's limiter, at a lowered SLUICE_LIMITER_MEMORY_MAX:
 * a tenant making risk checks on fresh subjects must not erase another tenant's bans and counts,
 * nor its own daily quota.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, phone, sms, startApp, type TestApp } from './support.js';

const CAP = 2_000;
let t: TestApp;
beforeAll(async () => {
  t = await startApp({ SLUICE_LIMITER_MEMORY_MAX: String(CAP) });
});
afterAll(() => t.close());

/** `count` risk checks on fresh subjects with a 31-day window, each admitted. */
async function flood(apiKey: string, count: number, tag: string): Promise<void> {
  const rules = [{ windowSeconds: 31 * 86_400, limit: 1 }];
  for (let n = 0; n < count; n++) {
    const response = await t.call(apiKey, 'POST', '/v1/frequency/check', { action: 'flood', subject: `${tag}-${n}`, rules });
    expect(response.statusCode, response.body).toBe(200);
  }
}

describe('SLUICE_LIMITER_MEMORY_MAX under a flood of risk subjects', () => {
  it("another tenant's ban and counts survive", async () => {
    const victim = await t.createTenant();
    const rules = [{ windowSeconds: 60, limit: 3, banSeconds: 600 }];
    expect((await t.admin('PUT', `/v1/admin/tenants/${victim.id}/rules/sms`, { rules })).statusCode).toBe(200);
    const banned = phone(70_000_001);
    const counted = phone(70_000_002);
    for (let i = 0; i < 3; i++) expect((await t.send(victim.apiKey, sms(banned))).statusCode).toBe(202);
    expectError(await t.send(victim.apiKey, sms(banned)), 429, 'RATE_LIMITED');
    for (let i = 0; i < 3; i++) expect((await t.send(victim.apiKey, sms(counted))).statusCode).toBe(202);

    const attacker = await t.createTenant();
    await flood(attacker.apiKey, CAP + 100, 'a');
    expect(await t.runtime.metrics.registry.getSingleMetricAsString('sluice_limiter_memory_evictions_total')).toMatch(/ [1-9]\d*$/m);

    expectError(await t.send(victim.apiKey, sms(banned)), 429, 'BANNED');
    expectError(await t.send(victim.apiKey, sms(counted)), 429, 'RATE_LIMITED');
  });

  it("a tenant's own daily quota survives its flood", async () => {
    const tenant = await t.createTenant();
    expect((await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { dailyQuotas: { sms: 3 } })).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await t.send(tenant.apiKey, sms(phone(70_000_100 + i)))).statusCode).toBe(202);
    expectError(await t.send(tenant.apiKey, sms(phone(70_000_200))), 429, 'QUOTA_EXCEEDED');
    await flood(tenant.apiKey, CAP + 100, 'q');
    expectError(await t.send(tenant.apiKey, sms(phone(70_000_201))), 429, 'QUOTA_EXCEEDED');
  });
});

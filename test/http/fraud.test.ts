/**
 * SMS pumping protection in the embedded default (in-process limiter, SQLite), through
 * app.inject(): the scenarios of fraud-scenarios.ts, the policy's and the prices' checks, and a
 * range that recovers once its window has passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ATTACK_POLICY,
  attackIsRefused,
  attackNumber,
  batchIsJudgedPerMessage,
  countriesAndSafeList,
  feedbackIsIsolated,
  laterRefusalGivesVelocityBack,
  monitorRecordsTheAttack,
  ordinaryNumber,
  prefixVelocityHolds,
  runAttack,
  setPolicy,
  setPrices,
  spendCapHolds,
} from './fraud-scenarios.js';
import { expectError, sms, startApp, type TestApp } from './support.js';

describe('SMS pumping protection, in process', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
    await setPrices(t);
  });
  afterAll(() => t.close());

  it(
    'refuses a pumping attack on one range after at most the limit; ordinary confirmed traffic passes throughout',
    () => attackIsRefused(t),
    60_000,
  );
  it('holds a prefix velocity exactly', () => prefixVelocityHolds(t), 60_000);
  it('in monitor mode accepts the attack, and counts and writes down what it would have refused', () => monitorRecordsTheAttack(t), 60_000);
  it(
    'holds the monthly spend cap exactly under concurrency; a cancel gives back, once; a later refusal takes nothing',
    () => spendCapHolds(t),
    30_000,
  );
  it('gives the prefix velocity back when a later step refuses', () => laterRefusalGivesVelocityBack(t));
  it('judges each message of a batch', () => batchIsJudgedPerMessage(t));
  it("answers another tenant's feedback 404; a repeat is idempotent; batch messages take it", () => feedbackIsIsolated(t));
  it('refuses a country off the list, even for a safe number; the safe list skips velocity', () => countriesAndSafeList(t));

  it('lets the range recover once its window has passed', async () => {
    const tenant = await t.createTenant();
    await setPolicy(t, tenant.id, { mode: 'enforce', ...ATTACK_POLICY });
    // A send every 10 s: 200 sends span 2,000 s of the hour's window.
    const start = t.clock.now();
    const { accepted, refusals } = await runAttack(t, tenant.apiKey, 10_000);
    expect(accepted).toBe(20);
    // The first admitted send (at `start`) leaves the window (t − 3600 s, t] at start + 3600 s, as the last refusal said.
    expect(start + 3_600_000 - (t.clock.now() - 10_000)).toBeLessThanOrEqual((refusals.at(-1)!.retryAfterSeconds as number) * 1000);
    t.clock.set(start + 3_600_000 - 1);
    expectError(await t.send(tenant.apiKey, sms(attackNumber(500))), 429, 'FRAUD_SUSPECTED');
    t.clock.set(start + 3_600_000);
    expect((await t.send(tenant.apiKey, sms(attackNumber(501)))).statusCode).toBe(202);
    expectError(await t.send(tenant.apiKey, sms(attackNumber(502))), 429, 'FRAUD_SUSPECTED');
  }, 60_000);

  it('checks a policy: ISO country codes, one list, bounded sizes, a cap in the prices’ currency; default mode monitor', async () => {
    const tenant = await t.createTenant();
    const put = (body: unknown) => t.admin('PUT', `/v1/admin/tenants/${tenant.id}/fraud/sms`, body);
    expectError(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/fraud/sms`), 404, 'NOT_FOUND');
    expect(expectError(await put({ countries: { allow: ['CN', 'ZZ'] } }), 400, 'INVALID_REQUEST').field).toBe('countries.allow[1]');
    expectError(await put({ countries: { allow: ['CN'], block: ['GB'] } }), 400, 'INVALID_REQUEST');
    expectError(await put({ countries: { allow: ['cn'] } }), 400, 'INVALID_REQUEST');
    // Hostile sizes: each list is refused before any entry is looked at.
    expectError(await put({ countries: { block: Array.from({ length: 100_000 }, () => 'GB') } }), 400, 'INVALID_REQUEST');
    expectError(await put({ safe: ['+1'.padEnd(17, '9')] }), 400, 'INVALID_REQUEST');
    expectError(
      await put({ prefixes: Array.from({ length: 9 }, () => ({ digits: 8, windowSeconds: 60, limit: 1 })) }),
      400,
      'INVALID_REQUEST',
    );
    expect(
      expectError(
        await put({
          prefixes: [
            { digits: 8, windowSeconds: 60, limit: 1 },
            { digits: 8, windowSeconds: 60, limit: 2 },
          ],
        }),
        400,
        'INVALID_REQUEST',
      ).field,
    ).toBe('prefixes[1]');
    expectError(await put({ safe: ['4477'] }), 400, 'INVALID_REQUEST');
    expectError(await put({ safe: Array.from({ length: 1001 }, (_, i) => `+44${i}`) }), 400, 'INVALID_REQUEST');
    expect(expectError(await put({ monthlySpend: { limit: 10, currency: 'EUR' } }), 400, 'INVALID_REQUEST').field).toBe(
      'monthlySpend.currency',
    );
    expect(expectError(await put({ monthlySpend: { limit: 0.0000001, currency: 'USD' } }), 400, 'INVALID_REQUEST').field).toBe(
      'monthlySpend.limit',
    );
    expect(
      expectError(
        await put({ conversion: { windowSeconds: 60, minSends: 1, minRate: 0.5, by: 'country', digits: 6 } }),
        400,
        'INVALID_REQUEST',
      ).field,
    ).toBe('conversion.digits');
    expectError(await t.admin('PUT', '/v1/admin/tenants/unknown/fraud/sms', {}), 404, 'NOT_FOUND');

    const stored = await put({ countries: { block: ['GB', 'AC', 'GB'] }, monthlySpend: { limit: 5, currency: 'USD' } });
    expect(stored.json()).toEqual({ mode: 'monitor', countries: { block: ['AC', 'GB'] }, monthlySpend: { limit: 5, currency: 'USD' } });
    expect((await t.admin('GET', `/v1/admin/tenants/${tenant.id}/fraud/sms`)).json()).toEqual(stored.json());
    // What GET answers can be PUT back.
    expect((await put(stored.json())).statusCode).toBe(200);
    // Prices in another currency than a cap: 409, naming the tenant.
    const conflict = expectError(await t.admin('PUT', '/v1/admin/prices/sms', { currency: 'EUR', default: 0.05 }), 409, 'CONFLICT');
    expect(conflict.message).toContain(tenant.id);
    expectError(
      await t.admin('PUT', '/v1/admin/prices/sms', { currency: 'USD', default: 0.05, countries: { ZZ: 1 } }),
      400,
      'INVALID_REQUEST',
    );
    expect((await t.admin('GET', '/v1/admin/prices/sms')).json()).toEqual({ currency: 'USD', default: 0.05, countries: { GB: 0.04 } });
  });

  it('charges each country its price and shows the charge on the message', async () => {
    const tenant = await t.createTenant();
    await setPolicy(t, tenant.id, { mode: 'enforce', monthlySpend: { limit: 10, currency: 'USD' } });
    const gb = (await t.send(tenant.apiKey, sms(attackNumber(1)))).json().id as string;
    const cn = (await t.send(tenant.apiKey, sms(ordinaryNumber(1)))).json().id as string;
    expect((await t.admin('GET', `/v1/admin/tenants/${tenant.id}/messages/${gb}`)).json().fraud).toEqual({ cost: 0.04, flags: [] });
    expect((await t.admin('GET', `/v1/admin/tenants/${tenant.id}/messages/${cn}`)).json().fraud).toEqual({ cost: 0.05, flags: [] });
    expect((await t.admin('GET', `/v1/admin/tenants/${tenant.id}/fraud/sms/status`)).json().spend.spent).toBeCloseTo(0.09, 9);
  });
});

/**
 * Concurrent twins under one Idempotency-Key (embedded default): the first is accepted, the rest
 * replay it; none consumes a frequency slot or a quota unit of its own, and nobody is banned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, phone, sms, startApp, type TestApp } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

describe('Idempotency-Key twins sent at once', () => {
  it.each([2, 4, 8])('%i twins: one 202, the rest 200 with the same id, no ban, nothing consumed', async (twins) => {
    const tenant = await t.createTenant();
    const rules = { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 600 }] };
    expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, rules)).statusCode).toBe(200);
    expect((await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { dailyQuotas: { sms: 2 } })).statusCode).toBe(200);
    const to = phone(71_000_000 + twins);
    const answers = await Promise.all(
      Array.from({ length: twins }, () => t.send(tenant.apiKey, sms(to), { 'idempotency-key': `otp-${twins}` })),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses, answers.map((answer) => answer.body).join('\n')).toEqual([...Array(twins - 1).fill(200), 202]);
    expect(new Set(answers.map((answer) => answer.json().id)).size).toBe(1);

    // No ban: the lift finds none. The daily quota of 2 has one unit left for another recipient.
    const lift = await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/bans/sms/${encodeURIComponent(to)}`);
    expect(lift.json()).toEqual({ lifted: false });
    expect((await t.send(tenant.apiKey, sms(phone(72_000_000 + twins)))).statusCode).toBe(202);
    t.clock.advance(61_000);
    expectError(await t.send(tenant.apiKey, sms(to)), 429, 'QUOTA_EXCEEDED'); // not BANNED
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, phone, sms, startApp, type TestApp } from './support.js';

let t: TestApp;

beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

const putQuietHours = (tenantId: string, body: unknown) => t.admin('PUT', `/v1/admin/tenants/${tenantId}/quiet-hours/sms`, body);

describe('quiet hours and the recipient rules', () => {
  it('bulk sends held for the morning and refused there do not ban the recipient now: a transactional send goes', async () => {
    const tenant = await t.createTenant();
    const rules = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, {
      rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }],
    });
    expect(rules.statusCode, rules.body).toBe(200);
    const put = await putQuietHours(tenant.id, { timeZone: 'Asia/Shanghai', windows: [{ from: '21:00', to: '08:00' }], applies: 'bulk' });
    expect(put.statusCode, put.body).toBe(200);
    t.clock.set(Date.parse('2026-06-01T14:30:00Z')); // 22:30 in Shanghai, 9.5 h before 08:00
    const to = phone(90_001);
    for (let n = 0; n < 3; n++) {
      const held = await t.send(tenant.apiKey, sms(to, { body: `sale ${n}`, priority: 'bulk' }));
      expect(held.json()).toMatchObject({ status: 'scheduled', dueAt: '2026-06-02T00:00:00.000Z', deferredBy: 'quiet-hours' });
    }
    // The minute ending at 08:00 is full: refused for that minute, without the 600 s ban.
    const fourth = await t.send(tenant.apiKey, sms(to, { body: 'sale 3', priority: 'bulk' }));
    expect(expectError(fourth, 429, 'RATE_LIMITED')).toMatchObject({ retryAfterSeconds: 60, rule: 0 });
    const otp = await t.send(tenant.apiKey, sms(to));
    expect(otp.statusCode, otp.body).toBe(202);
    expect(otp.json()).toEqual({ id: expect.any(String), status: 'queued' });
  });
});

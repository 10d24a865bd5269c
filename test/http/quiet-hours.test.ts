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

describe('quiet hours that leave no time to send', () => {
  it('a PUT whose windows together cover the whole day is refused, also overlapping or across midnight; one free minute is enough', async () => {
    const tenant = await t.createTenant();
    for (const windows of [
      [
        { from: '00:00', to: '12:00' },
        { from: '12:00', to: '00:00' },
      ],
      [
        { from: '06:00', to: '23:00' },
        { from: '22:00', to: '07:00' },
      ],
      [
        { from: '08:00', to: '21:00' },
        { from: '21:00', to: '08:00' },
      ],
    ]) {
      const refused = await putQuietHours(tenant.id, { timeZone: 'America/New_York', windows, applies: 'all' });
      expect(expectError(refused, 400, 'INVALID_REQUEST')).toMatchObject({
        field: 'windows',
        message: expect.stringContaining('whole day'),
      });
    }
    expect((await t.admin('GET', `/v1/admin/tenants/${tenant.id}/quiet-hours/sms`)).statusCode).toBe(404);
    const accepted = await putQuietHours(tenant.id, {
      timeZone: 'America/New_York',
      windows: [
        { from: '00:01', to: '12:00' },
        { from: '12:00', to: '00:00' },
      ],
      applies: 'all',
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
  });

  it('a stored set covering the whole day (written before such sets were refused) refuses the send with 409, never holds it', async () => {
    const tenant = await t.createTenant();
    await t.runtime.repositories.quietHours.set(tenant.id, 'sms', {
      timeZone: 'Asia/Shanghai',
      windows: [
        { from: '00:00', to: '12:00' },
        { from: '12:00', to: '00:00' },
      ],
      applies: 'bulk',
    });
    const bulk = await t.send(tenant.apiKey, sms(phone(90_002), { priority: 'bulk' }));
    expect(expectError(bulk, 409, 'CONFLICT')).toMatchObject({ reason: 'quiet-hours', message: expect.stringContaining('whole day') });
    // Transactional messages are not held by `applies: bulk`: they go.
    expect((await t.send(tenant.apiKey, sms(phone(90_002)))).statusCode).toBe(202);
  });
});

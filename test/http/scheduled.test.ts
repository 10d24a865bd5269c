/**
 * Scheduled sends through the HTTP API: a recipient's frequency rules hold at the times messages
 * are sent (a scheduled message counts at its due time), and canceling one gives its slot back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, phone, sms, startApp, type TestApp } from './support.js';

const THREE_A_MINUTE = { rules: [{ windowSeconds: 60, limit: 3 }] };

let t: TestApp;
let numbers = 0;
const freshPhone = () => phone(30_000 + ++numbers);

beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

async function tenantWithThreeAMinute(): Promise<string> {
  const tenant = await t.createTenant();
  expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, THREE_A_MINUTE)).statusCode).toBe(200);
  return tenant.apiKey;
}

describe('scheduled sends and frequency rules', () => {
  it('3 a minute: 3 scheduled for now + 140 s, then 62 s later 3 more for the same instant are refused', async () => {
    const apiKey = await tenantWithThreeAMinute();
    const to = freshPhone();
    const sendAt = t.clock.now() + 140_000;
    for (let i = 0; i < 3; i++) {
      const accepted = await t.send(apiKey, sms(to, { sendAt }));
      expect(accepted.statusCode, accepted.body).toBe(202);
      expect(accepted.json().status).toBe('scheduled');
    }
    t.clock.advance(62_000);
    for (let i = 0; i < 3; i++) {
      const refused = expectError(await t.send(apiKey, sms(to, { sendAt })), 429, 'RATE_LIMITED');
      expect(refused).toMatchObject({ rule: 0, windowSeconds: 60, limit: 3 });
    }
    // A send now is in no minute with the scheduled ones (78 s ahead).
    expect((await t.send(apiKey, sms(to))).statusCode).toBe(202);
  });

  it('immediate sends count with a scheduled one in the same minute', async () => {
    const apiKey = await tenantWithThreeAMinute();
    const to = freshPhone();
    expect((await t.send(apiKey, sms(to, { sendAt: t.clock.now() + 100_000 }))).statusCode).toBe(202);
    // Its acceptance is a minute ago; it will be sent 39 s from now, within a minute of sends now.
    t.clock.advance(61_000);
    expect((await t.send(apiKey, sms(to))).statusCode).toBe(202);
    expect((await t.send(apiKey, sms(to))).statusCode).toBe(202);
    expectError(await t.send(apiKey, sms(to)), 429, 'RATE_LIMITED');
  });

  it('canceling a scheduled message gives its slot back', async () => {
    const apiKey = await tenantWithThreeAMinute();
    const to = freshPhone();
    const sendAt = t.clock.now() + 600_000;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.send(apiKey, sms(to, { sendAt }))).json().id);
    expectError(await t.send(apiKey, sms(to, { sendAt })), 429, 'RATE_LIMITED');
    const cancel = await t.call(apiKey, 'DELETE', `/v1/messages/${ids[1]}`);
    expect(cancel.statusCode, cancel.body).toBe(200);
    // A repeated cancel gives nothing more back.
    expect((await t.call(apiKey, 'DELETE', `/v1/messages/${ids[1]}`)).statusCode).toBe(200);
    expect((await t.send(apiKey, sms(to, { sendAt }))).statusCode).toBe(202);
    expectError(await t.send(apiKey, sms(to, { sendAt })), 429, 'RATE_LIMITED');
  });
});

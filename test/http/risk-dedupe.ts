/**
 * The requestId de-duplication of POST /v1/risk/events, as one scenario that the in-process and
 * the Redis stores both pass: a repeat records nothing and still answers 202, other ids record,
 * and the same id under another action is not a repeat.
 */
import { expect } from 'vitest';
import type { TestApp } from './support.js';

export async function expectEventsDeduplicated(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  const rules = [{ name: 'failed-verifications', kind: 'last-n', key: ['user'], n: 5, m: 3, outcome: 'failed' }];
  for (const action of ['otp', 'login']) {
    expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/${action}`, { rules })).statusCode).toBe(200);
  }
  const dimensions = { user: `u-${Math.random()}` };
  const event = (requestId: string, action = 'otp') =>
    t.call(tenant.apiKey, 'POST', '/v1/risk/events', { action, dimensions, outcome: 'failed', requestId });
  const allowed = async (action = 'otp') =>
    (await t.call(tenant.apiKey, 'POST', '/v1/risk/check', { action, dimensions })).json().allowed as boolean;

  const first = await event('verify-1');
  expect(first.statusCode, first.body).toBe(202);
  expect(first.json()).toEqual({ recorded: true });
  for (let i = 0; i < 3; i++) {
    const repeat = await event('verify-1');
    expect(repeat.statusCode, repeat.body).toBe(202);
    expect(repeat.json()).toEqual({ recorded: false, duplicate: true });
  }
  // One failure recorded, not four: 3 of the last 5 have not failed yet.
  expect(await allowed()).toBe(true);
  expect((await event('verify-2')).json()).toEqual({ recorded: true });
  // The same id under another action is another event.
  expect((await event('verify-1', 'login')).json()).toEqual({ recorded: true });
  expect(await allowed()).toBe(true);
  expect((await event('verify-3')).json()).toEqual({ recorded: true });
  expect(await allowed()).toBe(false);
  expect(await allowed('login')).toBe(true);
}

/**
 * A new tenant is not unlimited by default: it gets the rules of SLUICE_NEW_TENANT_RULES (the seed
 * rules) on sms and email, so its 4th send to one number within a minute is refused; with `none`
 * it gets no rules, and the creation's answer says what that means.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/settings/settings.js';
import { phone, startApp, type TestApp } from './support.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('a new tenant', () => {
  it('gets SLUICE_NEW_TENANT_RULES on sms and email (the seed rules by default): the 4th send to one number in a minute is 429', async () => {
    t = await startApp({ SLUICE_NEW_TENANT_RULES: '' });
    const created = (await t.admin('POST', '/v1/admin/tenants', { name: 'fresh' })).json();
    expect(created.warnings).toEqual([]);
    for (const channel of ['sms', 'email']) {
      const rules = (await t.admin('GET', `/v1/admin/tenants/${created.id}/rules/${channel}`)).json();
      expect(rules.rules, channel).toEqual(created.rules);
    }
    expect((await t.admin('GET', `/v1/admin/tenants/${created.id}/rules/webhook`)).json().rules).toEqual([]);
    const send = () => t!.send(created.apiKey, { channel: 'sms', to: phone(1), body: 'code 1234' });
    for (let i = 0; i < 3; i++) expect((await send()).statusCode).toBe(202);
    const fourth = await send();
    expect([fourth.statusCode, fourth.json().error.code]).toEqual([429, 'RATE_LIMITED']);
  });

  it('takes rules of its own from the setting, or none with a warning in the answer', async () => {
    t = await startApp({ SLUICE_NEW_TENANT_RULES: '60:1' });
    const one = (await t.admin('POST', '/v1/admin/tenants', { name: 'one-a-minute' })).json();
    expect(one.rules).toEqual([{ windowSeconds: 60, limit: 1, banSeconds: 0 }]);
    await t.close();

    t = await startApp({ SLUICE_NEW_TENANT_RULES: 'none' });
    const unlimited = (await t.admin('POST', '/v1/admin/tenants', { name: 'unlimited' })).json();
    expect(unlimited.rules).toEqual([]);
    expect(unlimited.warnings).toEqual([expect.stringContaining('sends to one recipient are unlimited until rules are set')]);
    for (let i = 0; i < 5; i++) expect((await t.send(unlimited.apiKey, { channel: 'sms', to: phone(2), body: 'x' })).statusCode).toBe(202);
  });

  it('refuses a setting that is not rules, naming the item', () => {
    expect(() => loadSettings({ SLUICE_NEW_TENANT_RULES: '60:3,sixty:1' })).toThrow('"sixty:1" is not WINDOW_SECONDS:LIMIT[:BAN_SECONDS]');
    expect(() => loadSettings({ SLUICE_NEW_TENANT_RULES: '60:0' })).toThrow('"60:0"');
  });
});

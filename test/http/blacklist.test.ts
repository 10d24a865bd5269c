/**
 * The admin blacklist routes: a tenant's list and the global one (every tenant), added to,
 * removed from and listed a page at a time, and live on every instance.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.js';
import { createRuntime } from '../../src/main/runtime.js';
import { loadSettings } from '../../src/settings/settings.js';
import { ADMIN_TOKEN, expectError, phone, sms, startApp, type TestApp } from './support.js';

let t: TestApp;
let numbers = 0;
const freshPhone = () => phone(30_000 + ++numbers);
const email = (to: string) => ({ channel: 'email', to, subject: 's', body: 'b' });

beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

describe('global blacklist: /v1/admin/blacklist', () => {
  it('applies to every tenant, on its channel or on all (*); removed, the recipient is sendable again', async () => {
    const [a, b] = [await t.createTenant(), await t.createTenant()];
    const to = freshPhone();
    const add = await t.admin('POST', '/v1/admin/blacklist', { channel: 'sms', recipients: [to.slice(3), 'nonsense'], reason: 'fraud' });
    expect(add.statusCode, add.body).toBe(200);
    expect(add.json()).toEqual({ added: [to], invalid: ['nonsense'] });
    expectError(await t.send(a.apiKey, sms(to)), 403, 'BLACKLISTED');
    expectError(await t.send(b.apiKey, sms(to)), 403, 'BLACKLISTED');

    expect((await t.admin('POST', '/v1/admin/blacklist', { recipients: ['Spam@Example.COM'] })).json().added).toEqual(['spam@example.com']);
    expectError(await t.send(a.apiKey, email('Spam@EXAMPLE.com')), 403, 'BLACKLISTED');

    const remove = await t.admin('DELETE', '/v1/admin/blacklist', { channel: 'sms', recipients: [to] });
    expect(remove.json()).toEqual({ removed: 1, invalid: [] });
    expect((await t.send(a.apiKey, sms(to))).statusCode).toBe(202);
    // Removing from another channel value than the entry's removes nothing.
    expect((await t.admin('DELETE', '/v1/admin/blacklist', { channel: 'email', recipients: ['Spam@example.com'] })).json()).toEqual({
      removed: 0,
      invalid: [],
    });
    expectError(await t.send(b.apiKey, email('Spam@example.com')), 403, 'BLACKLISTED');
    expect((await t.admin('DELETE', '/v1/admin/blacklist', { recipients: ['Spam@example.com'] })).json().removed).toBe(1);
    expect((await t.send(b.apiKey, email('Spam@example.com'))).statusCode).toBe(202);
  });

  it("a tenant's routes never reach the global list: the tenant id * is unknown", async () => {
    expectError(await t.admin('POST', '/v1/admin/tenants/*/blacklist', { recipients: [freshPhone()] }), 404, 'NOT_FOUND');
    expectError(await t.admin('GET', '/v1/admin/tenants/*/blacklist'), 404, 'NOT_FOUND');
    expectError(await t.admin('GET', '/v1/admin/tenants/no-such-tenant/blacklist'), 404, 'NOT_FOUND');
  });

  it('needs the admin token', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v1/admin/blacklist' }), 401, 'UNAUTHORIZED');
    const { apiKey } = await t.createTenant();
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/admin/blacklist',
        headers: { authorization: `Bearer ${apiKey}` },
        payload: { recipients: ['x@example.com'] },
      }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('listing a blacklist', () => {
  it("pages through a tenant's entries by channel then recipient, with their reason and time", async () => {
    const tenant = await t.createTenant();
    const url = `/v1/admin/tenants/${tenant.id}/blacklist`;
    const phones = [freshPhone(), freshPhone(), freshPhone()];
    await t.admin('POST', url, { channel: 'sms', recipients: phones, reason: 'complaint' });
    await t.admin('POST', url, { recipients: ['b@example.com', 'a@example.com'] });
    // Another tenant's and the global entries are not this tenant's list.
    await t.admin('POST', `/v1/admin/tenants/${(await t.createTenant()).id}/blacklist`, { recipients: ['other@example.com'] });

    const all = await t.admin('GET', url);
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toEqual({
      entries: [
        { channel: '*', recipient: 'a@example.com', reason: null, createdAt: new Date(t.clock.now()).toISOString() },
        { channel: '*', recipient: 'b@example.com', reason: null, createdAt: expect.any(String) },
        ...[...phones].sort().map((recipient) => ({ channel: 'sms', recipient, reason: 'complaint', createdAt: expect.any(String) })),
      ],
      next: null,
    });

    const seen: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await t.admin('GET', `${url}?limit=2${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.statusCode, page.body).toBe(200);
      const body = page.json() as { entries: unknown[]; next: string | null };
      expect(body.entries.length).toBeLessThanOrEqual(2);
      seen.push(...body.entries);
      cursor = body.next;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.json().entries);

    const smsOnly = await t.admin('GET', `${url}?channel=sms`);
    expect(smsOnly.json().entries.map((entry: { recipient: string }) => entry.recipient)).toEqual([...phones].sort());
  });

  it('the global list pages the same way', async () => {
    const recipients = Array.from({ length: 3 }, (_, i) => `global-${i}@example.org`);
    await t.admin('POST', '/v1/admin/blacklist', { channel: 'email', recipients });
    const first = (await t.admin('GET', '/v1/admin/blacklist?channel=email&limit=2')).json();
    expect(first.entries.map((entry: { recipient: string }) => entry.recipient)).toEqual(recipients.slice(0, 2));
    const second = (await t.admin('GET', `/v1/admin/blacklist?channel=email&limit=2&after=${first.next}`)).json();
    expect(second).toEqual({ entries: [expect.objectContaining({ recipient: recipients[2] })], next: null });
  });

  it('a bad limit, cursor or channel is 400 INVALID_REQUEST', async () => {
    expectError(await t.admin('GET', '/v1/admin/blacklist?limit=0'), 400, 'INVALID_REQUEST');
    expectError(await t.admin('GET', '/v1/admin/blacklist?limit=1001'), 400, 'INVALID_REQUEST');
    expectError(await t.admin('GET', '/v1/admin/blacklist?limit=ten'), 400, 'INVALID_REQUEST');
    expectError(await t.admin('GET', '/v1/admin/blacklist?after=not-a-cursor'), 400, 'INVALID_REQUEST');
    expectError(await t.admin('GET', '/v1/admin/blacklist?channel=fax'), 400, 'INVALID_REQUEST');
    expectError(await t.admin('GET', '/v1/admin/blacklist?page=2'), 400, 'INVALID_REQUEST');
    // PostgreSQL refuses NUL in text (a 500 there), so no control character is stored anywhere.
    const nul = { channel: 'sms', recipients: ['+8613800138000'], reason: 'asked\u0000to stop' };
    expectError(await t.admin('POST', '/v1/admin/blacklist', nul), 400, 'INVALID_REQUEST');
  });
});

describe('another instance on the same database', () => {
  it('sees a global change made through this one, as it sees a tenant change (its periodic check against SQL)', async () => {
    const settings = loadSettings({
      SLUICE_DB_URL: `sqlite:${join(t.dir, 'db.sqlite')}`,
      SLUICE_SECRET_KEY_FILE: join(t.dir, 'secret.key'),
      SLUICE_ADMIN_TOKEN: ADMIN_TOKEN,
      SLUICE_LOG_LEVEL: 'silent',
      SLUICE_CONFIG_CACHE_MS: '50',
    });
    const runtime = await createRuntime(settings);
    const other = await buildHttpApp(runtime.http);
    try {
      const tenant = await t.createTenant();
      const to = freshPhone();
      const sendThere = () =>
        other.inject({ method: 'POST', url: '/v1/messages', headers: { authorization: `Bearer ${tenant.apiKey}` }, payload: sms(to) });
      expect((await sendThere()).statusCode).toBe(202);
      await t.admin('POST', '/v1/admin/blacklist', { channel: 'sms', recipients: [to] });
      await expect.poll(async () => (await sendThere()).statusCode, { timeout: 5000, interval: 50 }).toBe(403);
      await t.admin('DELETE', '/v1/admin/blacklist', { channel: 'sms', recipients: [to] });
      await expect.poll(async () => (await sendThere()).statusCode, { timeout: 5000, interval: 50 }).toBe(202);
    } finally {
      await other.close();
      await runtime.close();
    }
  });
});

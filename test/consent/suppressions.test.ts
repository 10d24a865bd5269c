/**
 * Suppressions (issue 36, step 1): the admission step RECIPIENT_SUPPRESSED (before frequency,
 * consuming nothing; a batch refuses only that message), categories, the tenant and admin
 * routes, the consent record, and the last check before a send (`suppressed`, with its event).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/delivery/attempt.js';
import { suppressionDirectory } from '../../src/main/wiring/admission.js';
import { expectError, phone, sms, startApp, type TestApp } from '../http/support.js';

let t: TestApp;
let numbers = 0;
const freshPhone = () => phone(70_000 + ++numbers);

beforeAll(async () => {
  t = await startApp({ SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => {
  await t?.close();
});

const put = (apiKey: string, url: string, body: unknown = {}) =>
  t.app.inject({ method: 'PUT', url, headers: { authorization: `Bearer ${apiKey}`, 'user-agent': 'test-agent' }, payload: body as object });

describe('suppressions: admission', () => {
  it('refuses a suppressed recipient RECIPIENT_SUPPRESSED (403) with the reason and its time, consuming no frequency slot', async () => {
    const { id, apiKey } = await t.createTenant();
    expect(
      (await t.admin('PUT', `/v1/admin/tenants/${id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 0 }] })).statusCode,
    ).toBe(200);
    const to = freshPhone();
    const made = await put(apiKey, `/v1/suppressions/sms/${encodeURIComponent(to.slice(3))}`, { reason: 'asked by phone' });
    expect(made.statusCode, made.body).toBe(200);
    expect(made.json()).toMatchObject({
      created: true,
      suppression: { channel: 'sms', recipient: to, category: '*', source: 'api', reason: 'asked by phone' },
    });
    const refused = expectError(await t.send(apiKey, sms(to)), 403, 'RECIPIENT_SUPPRESSED');
    expect(refused).toMatchObject({ category: '*', source: 'api', reason: 'asked by phone', since: new Date(t.clock.now()).toISOString() });

    // Lifted, the first send takes the one slot: the refusals took none.
    const lifted = await t.call(apiKey, 'DELETE', `/v1/suppressions/sms/${encodeURIComponent(to)}`);
    expect(lifted.json()).toEqual({ removed: true });
    expect((await t.send(apiKey, sms(to))).statusCode).toBe(202);
  });

  it('a category suppression stops that category only; `*` stops every one; a batch refuses only that message', async () => {
    const { apiKey } = await t.createTenant();
    const [to, other] = [freshPhone(), freshPhone()];
    await put(apiKey, `/v1/suppressions/sms/${encodeURIComponent(to)}`, { category: 'marketing' });
    expectError(await t.send(apiKey, sms(to, { category: 'marketing' })), 403, 'RECIPIENT_SUPPRESSED');
    expect((await t.send(apiKey, sms(to, { category: 'alerts' }))).statusCode).toBe(202);
    expect((await t.send(apiKey, sms(to))).statusCode).toBe(202);
    expectError(await t.send(apiKey, sms(to, { category: '*' })), 400, 'INVALID_REQUEST');

    const batch = await t.app.inject({
      method: 'POST',
      url: '/v1/messages/batch',
      headers: { authorization: `Bearer ${apiKey}` },
      payload: { channel: 'sms', vendorTemplate: 'SMS_1', category: 'marketing', recipients: [{ to }, { to: other }] },
    });
    expect(batch.statusCode, batch.body).toBe(200);
    const results = batch.json().results;
    expect(results[0].error.code).toBe('RECIPIENT_SUPPRESSED');
    expect(results[1].status).toBe('queued');
  });
});

describe('suppressions: routes and the consent record', () => {
  it('lists with filters and a cursor; admin routes reach any tenant; the record keeps every change with its evidence, and nothing of another tenant', async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const to = freshPhone();
    for (let n = 0; n < 3; n++) await put(a.apiKey, `/v1/suppressions/sms/${encodeURIComponent(freshPhone())}`, { category: 'news' });
    await put(a.apiKey, `/v1/suppressions/email/${encodeURIComponent('Ann@Example.com')}`);
    const first = await t.call(a.apiKey, 'GET', '/v1/suppressions?channel=sms&category=news&limit=2');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().entries).toHaveLength(2);
    const second = await t.call(a.apiKey, 'GET', `/v1/suppressions?channel=sms&category=news&limit=2&after=${first.json().next}`);
    expect(second.json().entries).toHaveLength(1);
    expect(second.json().next).toBeNull();
    expect((await t.call(a.apiKey, 'GET', '/v1/suppressions?channel=email')).json().entries[0].recipient).toBe('ann@example.com');
    expect((await t.call(b.apiKey, 'GET', '/v1/suppressions')).json().entries).toEqual([]);

    // The admin suppresses for tenant a; b's own change of the same number stays b's.
    const admin = await t.admin('PUT', `/v1/admin/tenants/${a.id}/suppressions/sms/${encodeURIComponent(to)}`, {
      reason: 'complaint by phone',
    });
    expect(admin.json().suppression.source).toBe('admin');
    await put(b.apiKey, `/v1/suppressions/sms/${encodeURIComponent(to)}`);
    await t.call(a.apiKey, 'DELETE', `/v1/suppressions/sms/${encodeURIComponent(to)}`);
    const history = await t.call(a.apiKey, 'GET', `/v1/recipients/sms/${encodeURIComponent(to)}/consent`);
    expect(history.statusCode, history.body).toBe(200);
    expect(history.json().records.map((r: { action: string; source: string }) => [r.action, r.source])).toEqual([
      ['suppressed', 'admin'],
      ['unsuppressed', 'api'],
    ]);
    expect(history.json().records[1].evidence).toMatchObject({ address: '127.0.0.1' });
    const adminView = await t.admin('GET', `/v1/admin/tenants/${b.id}/recipients/sms/${encodeURIComponent(to)}/consent`);
    expect(adminView.json().records).toHaveLength(1);
    expect((await t.admin('GET', `/v1/admin/tenants/${b.id}/suppressions/sms/${encodeURIComponent(to)}`)).json().suppressed).toBe(true);
    expect((await t.call(a.apiKey, 'GET', `/v1/suppressions/sms/${encodeURIComponent(to)}`)).json().suppressed).toBe(false);
    expectError(await t.call(a.apiKey, 'GET', '/v1/suppressions/sms/not-a-number'), 400, 'INVALID_REQUEST');
    expectError(
      await t.app.inject({
        method: 'GET',
        url: `/v1/admin/tenants/${a.id}/suppressions`,
        headers: { authorization: `Bearer ${a.apiKey}` },
      }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('suppressions: the last check before a send', () => {
  it('a scheduled message whose recipient is suppressed before it leaves ends `suppressed`, with message.suppressed, and reaches no provider', async () => {
    const { id, apiKey } = await t.createTenant();
    const hook = await t.admin('POST', `/v1/admin/tenants/${id}/webhooks`, {
      url: 'http://127.0.0.1:9/hook',
      events: ['message.suppressed'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const to = freshPhone();
    const accepted = await t.send(apiKey, sms(to, { category: 'marketing', sendAt: t.clock.now() + 60_000 }));
    expect(accepted.statusCode, accepted.body).toBe(202);
    await put(apiKey, `/v1/suppressions/sms/${encodeURIComponent(to)}`, { category: 'marketing', reason: 'STOP' });

    const messages = t.runtime.repositories.messages;
    await messages.drain();
    t.clock.advance(61_000);
    const claimed = await messages.claim(accepted.json().id, { now: t.clock.now(), leaseMs: 60_000 });
    const suppressions = suppressionDirectory(t.runtime.settings, t.runtime, t.runtime.metrics);
    let sent = 0;
    const provider = { id: 'p', name: 'p', channel: 'sms', send: async () => ({ providerMessageId: String(++sent) }) };
    const outcome = await runAttempt(
      claimed!,
      {
        messages,
        providers: { providersFor: async () => [provider], pace: async () => undefined } as never,
        clock: t.clock,
        retryBaseMs: 1,
        retryMaxMs: 1,
        random: Math.random,
        requeue: async () => undefined,
        suppressed: (message) => suppressions.beforeSend(message),
      },
      new AbortController().signal,
    );
    expect(outcome).toEqual({ kind: 'suppressed' });
    expect(sent).toBe(0);
    const view = (await t.call(apiKey, 'GET', `/v1/messages/${accepted.json().id}`)).json();
    expect(view.status).toBe('suppressed');
    expect(view.lastError).toMatch(/^recipient suppressed for marketing since .* \(api: STOP\)$/);
    await messages.drain();
    const rows = await t.runtime.database.db.selectFrom('webhook_events').select('type').where('tenant_id', '=', id).execute();
    expect(rows.map((row) => row.type)).toEqual(['message.suppressed']);
  });
});

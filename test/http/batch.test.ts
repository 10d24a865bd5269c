import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support.js';

let t: TestApp;
const phone = (n: number) => `+861390013${String(n).padStart(4, '0')}`;
const batch = (apiKey: string, body: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/messages/batch',
    headers: { authorization: `Bearer ${apiKey}`, ...headers },
    payload: body as object,
  });

beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

describe('POST /v1/messages/batch', () => {
  it('admits each message on its own: results in request order, a refused one does not refuse the batch', async () => {
    const tenant = await t.createTenant();
    await t.admin('POST', `/v1/admin/tenants/${tenant.id}/blacklist`, { channel: 'sms', recipients: [phone(2)] });
    const response = await batch(tenant.apiKey, {
      messages: [
        { channel: 'sms', to: phone(1), body: 'one' },
        { channel: 'sms', to: phone(2), body: 'blacklisted' },
        { channel: 'sms', to: '12', body: 'bad number' },
        { channel: 'sms', to: phone(3), body: 'three', priority: 'transactional' },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json();
    expect(results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3]);
    expect(results[0]).toMatchObject({ status: 'queued' });
    expect(results[1].error.code).toBe('BLACKLISTED');
    expect(results[2].error).toMatchObject({ code: 'INVALID_REQUEST', field: 'to' });
    expect(results[3]).toMatchObject({ status: 'queued' });
    await t.runtime.repositories.messages.drain();
    expect((await t.runtime.repositories.messages.get(results[0].id))?.priority).toBe('bulk');
    expect((await t.runtime.repositories.messages.get(results[3].id))?.priority).toBe('transactional');
  });

  it('refuses a message that fails the send schema in its own result, with the error a single send would answer', async () => {
    const tenant = await t.createTenant();
    const malformed = [
      { channel: 'sms', to: phone(60), body: 'extra', unknown: 1 },
      { channel: 'sms', to: phone(61), body: 'x'.repeat(32_769) },
      { channel: 'fax', to: phone(62), body: 'fax' },
      { channel: 'sms', to: phone(63), body: 'late', priority: 'urgent' },
      7,
    ];
    const response = await batch(tenant.apiKey, {
      messages: [{ channel: 'sms', to: phone(64), body: 'ok' }, ...malformed, { channel: 'sms', to: phone(65), body: 'ok too' }],
    });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json();
    expect(results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(results[0]).toMatchObject({ status: 'queued' });
    expect(results[6]).toMatchObject({ status: 'queued' });
    for (const [i, message] of malformed.entries()) {
      const single = await t.send(tenant.apiKey, message);
      expect(single.statusCode, single.body).toBe(400);
      expect(results[i + 1], JSON.stringify(message).slice(0, 80)).toEqual({ index: i + 1, error: single.json().error });
    }
    await t.runtime.repositories.messages.drain();
    const stored = await t.runtime.database.db.selectFrom('messages').select('recipient').where('tenant_id', '=', tenant.id).execute();
    expect(stored.map((row) => row.recipient).sort()).toEqual([phone(64), phone(65)]);
  });

  it('refuses a campaign recipient that fails its schema in its own result; the batch envelope is still checked whole', async () => {
    const tenant = await t.createTenant();
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/hello`, { params: {}, body: 'Hello' });
    const response = await batch(tenant.apiKey, {
      channel: 'sms',
      template: 'hello',
      recipients: [{ to: phone(70) }, { to: phone(71), extra: true }, { to: 'x'.repeat(321) }, { to: phone(72) }],
    });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json();
    expect(results[0]).toMatchObject({ status: 'queued' });
    expect(results[1]).toEqual({ index: 1, error: { code: 'INVALID_REQUEST', message: 'body must NOT have additional properties' } });
    expect(results[2]).toEqual({ index: 2, error: { code: 'INVALID_REQUEST', message: 'body/to must NOT have more than 320 characters' } });
    expect(results[3]).toMatchObject({ status: 'queued' });
    // The envelope: its own fields, the forms, the array's bounds.
    for (const body of [
      { messages: [{ channel: 'sms', to: phone(73), body: 'x' }], extra: 1 },
      { channel: 'fax', template: 'hello', recipients: [{ to: phone(74) }] },
      { messages: 'all of them' },
      { messages: [] },
    ]) {
      const refused = await batch(tenant.apiKey, body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.json().error.code).toBe('INVALID_REQUEST');
    }
  });

  it('counts quotas across the batch: the daily quota admits exactly its number', async () => {
    const tenant = await t.createTenant();
    await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { dailyQuotas: { sms: 3 } });
    const messages = Array.from({ length: 8 }, (_, i) => ({ channel: 'sms', to: phone(10 + i), body: `m${i}` }));
    const { results } = (await batch(tenant.apiKey, { messages })).json();
    expect(results.filter((r: { id?: string }) => r.id).length).toBe(3);
    expect(results.filter((r: { error?: { code: string } }) => r.error?.code === 'QUOTA_EXCEEDED').length).toBe(5);
  });

  it('a refused message carries what a single send would answer: retryAfterSeconds (the Retry-After) and the rule', async () => {
    const tenant = await t.createTenant();
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 3 }] });
    const messages = Array.from({ length: 4 }, (_, i) => ({ channel: 'sms', to: phone(30), body: `m${i}` }));
    const { results } = (await batch(tenant.apiKey, { messages })).json();
    expect(results.slice(0, 3).every((r: { id?: string }) => r.id)).toBe(true);
    const refused = results[3].error;
    expect(refused.code).toMatch(/^(RATE_LIMITED|BANNED)$/);
    expect(refused.retryAfterSeconds).toBeGreaterThan(0);
    const single = await t.app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { authorization: `Bearer ${tenant.apiKey}` },
      payload: { channel: 'sms', to: phone(30), body: 'again' },
    });
    expect(single.statusCode).toBe(429);
    expect(Object.keys(refused).sort()).toEqual(Object.keys(single.json().error).sort());
    expect(Number(single.headers['retry-after'])).toBe(single.json().error.retryAfterSeconds);
  });

  it('replays the same results under the same Idempotency-Key, sending nothing again', async () => {
    const tenant = await t.createTenant();
    const body = {
      messages: [
        { channel: 'sms', to: phone(30), body: 'a' },
        { channel: 'sms', to: 'nope', body: 'b' },
        { channel: 'sms', to: phone(31), body: 'c' },
      ],
    };
    const first = (await batch(tenant.apiKey, body, { 'idempotency-key': 'campaign-1' })).json().results;
    const again = (await batch(tenant.apiKey, body, { 'idempotency-key': 'campaign-1' })).json().results;
    expect(again.map((r: { id?: string }) => r.id)).toEqual(first.map((r: { id?: string }) => r.id));
    expect(again[0].replayed).toBe(true);
    expect(again[1].error.code).toBe('INVALID_REQUEST');
    await t.runtime.repositories.messages.drain();
    const stored = await t.runtime.database.db.selectFrom('messages').select('id').where('tenant_id', '=', tenant.id).execute();
    expect(stored).toHaveLength(2);
  });

  it('takes the campaign form: one template, recipients with their own params over the shared ones', async () => {
    const tenant = await t.createTenant();
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/promo`, {
      params: { name: { type: 'string' }, code: { type: 'string' } },
      body: 'Hi {{name}}, use {{code}}',
    });
    const response = await batch(tenant.apiKey, {
      channel: 'sms',
      template: 'promo',
      params: { code: 'SPRING' },
      recipients: [{ to: phone(40), params: { name: 'Ann' } }, { to: phone(41), params: { name: 'Bo', code: 'VIP' } }, { to: phone(42) }],
    });
    const { results } = response.json();
    expect(results[2].error).toMatchObject({ code: 'INVALID_REQUEST', field: 'params.name' });
    await t.runtime.repositories.messages.drain();
    expect((await t.runtime.repositories.messages.get(results[0].id))?.payload.body).toBe('Hi Ann, use SPRING');
    expect((await t.runtime.repositories.messages.get(results[1].id))?.payload.body).toBe('Hi Bo, use VIP');
  });

  it('takes 1 to 1,000 messages', async () => {
    const tenant = await t.createTenant();
    expect((await batch(tenant.apiKey, { messages: [] })).statusCode).toBe(400);
    const many = Array.from({ length: 1001 }, (_, i) => ({ channel: 'sms', to: phone(i), body: 'x' }));
    expect((await batch(tenant.apiKey, { messages: many })).statusCode).toBe(400);
    const full = (await batch(tenant.apiKey, { messages: many.slice(0, 1000) })).json().results;
    expect(full.filter((r: { id?: string }) => r.id).length).toBe(1000);
  });
});

describe('quiet hours', () => {
  it('schedules a message due inside a window for its end, says so, and moves a sendAt the same way', async () => {
    const tenant = await t.createTenant();
    const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/quiet-hours/sms`, {
      timeZone: 'Asia/Shanghai',
      windows: [{ from: '21:00', to: '08:00' }],
      applies: 'bulk',
    });
    expect(put.statusCode, put.body).toBe(200);
    t.clock.set(Date.parse('2026-06-01T15:00:00Z')); // 23:00 in Shanghai
    const bulk = await t.send(tenant.apiKey, { channel: 'sms', to: phone(50), body: 'sale', priority: 'bulk' });
    expect(bulk.statusCode, bulk.body).toBe(202);
    expect(bulk.json()).toMatchObject({ status: 'scheduled', dueAt: '2026-06-02T00:00:00.000Z', deferredBy: 'quiet-hours' });
    // applies: bulk — a transactional message goes now.
    expect((await t.send(tenant.apiKey, { channel: 'sms', to: phone(51), body: 'otp 1234' })).json()).toEqual({
      id: expect.any(String),
      status: 'queued',
    });
    // A sendAt inside a window moves to its end (05:00 Shanghai → 08:00).
    const later = await t.send(tenant.apiKey, {
      channel: 'sms',
      to: phone(52),
      body: 'x',
      priority: 'bulk',
      sendAt: '2026-06-02T05:00:00+08:00',
    });
    expect(later.json()).toMatchObject({ status: 'scheduled', dueAt: '2026-06-02T00:00:00.000Z', deferredBy: 'quiet-hours' });
    // In a batch (bulk by default).
    const { results } = (await batch(tenant.apiKey, { messages: [{ channel: 'sms', to: phone(53), body: 'y' }] })).json();
    expect(results[0]).toMatchObject({ status: 'scheduled', dueAt: '2026-06-02T00:00:00.000Z', deferredBy: 'quiet-hours' });
    // applies: all — transactional waits too; removing the window lets it go.
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/quiet-hours/sms`, {
      timeZone: 'Asia/Shanghai',
      windows: [{ from: '21:00', to: '08:00' }],
      applies: 'all',
    });
    expect((await t.send(tenant.apiKey, { channel: 'sms', to: phone(54), body: 'otp' })).json().status).toBe('scheduled');
    await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/quiet-hours/sms`);
    expect((await t.send(tenant.apiKey, { channel: 'sms', to: phone(55), body: 'otp' })).json().status).toBe('queued');
    t.clock.set(Date.now());
  });

  it('refuses an unknown zone and a bad time', async () => {
    const tenant = await t.createTenant();
    const zone = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/quiet-hours/sms`, {
      timeZone: 'Mars/Base',
      windows: [],
      applies: 'all',
    });
    expect(zone.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'timeZone' });
    const time = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/quiet-hours/sms`, {
      timeZone: 'UTC',
      windows: [{ from: '25:00', to: '08:00' }],
      applies: 'all',
    });
    expect(time.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'windows.0.from' });
  });
});

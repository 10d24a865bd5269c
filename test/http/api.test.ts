/**
 * The HTTP API of DESIGN.md §8 end to end through real services: a SQLite file, the in-process
 * limiter, the real admission chain. Every route but /metrics, and every error code the API can
 * produce, with the `{"error": {"code", "message"}}` shape and `Retry-After` on every 429.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, expectError, phone, sms, startApp, type TestApp } from './support.js';

const SEED_RULES = {
  rules: [
    { windowSeconds: 60, limit: 3, banSeconds: 600 },
    { windowSeconds: 3600, limit: 10 },
    { windowSeconds: 86_400, limit: 50 },
  ],
};

let t: TestApp;
let numbers = 0;
/** A recipient no other test uses. */
const freshPhone = () => phone(10_000 + ++numbers);

beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

describe('POST /v1/messages', () => {
  it('accepts an sms: 202 {id, status: queued}, readable by GET with the normalised recipient', async () => {
    const { apiKey } = await t.createTenant();
    const national = `138${String(20_000 + ++numbers).padStart(8, '0')}`;
    const response = await t.send(apiKey, sms(national));
    expect(response.statusCode, response.body).toBe(202);
    const accepted = response.json();
    expect(accepted).toEqual({ id: expect.any(String), status: 'queued' });

    const read = await t.call(apiKey, 'GET', `/v1/messages/${accepted.id}`);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({
      id: accepted.id,
      channel: 'sms',
      to: `+86${national}`,
      status: 'queued',
      attempts: 0,
      deliveryAttempts: [],
    });
  });

  it('accepts email and webhook messages', async () => {
    const { apiKey } = await t.createTenant();
    const email = await t.send(apiKey, { channel: 'email', to: 'Someone@Example.COM', subject: 'hi', body: 'hello' });
    expect(email.statusCode, email.body).toBe(202);
    const read = await t.call(apiKey, 'GET', `/v1/messages/${email.json().id}`);
    expect(read.json().to).toBe('Someone@example.com');
    const webhook = await t.send(apiKey, { channel: 'webhook', to: 'ops-alerts', body: 'disk full' });
    expect(webhook.statusCode, webhook.body).toBe(202);
  });

  it('with a future sendAt the message is scheduled, as ISO text or epoch ms', async () => {
    const { apiKey } = await t.createTenant();
    const at = t.clock.now() + 3_600_000;
    const iso = await t.send(apiKey, sms(freshPhone(), { sendAt: new Date(at).toISOString() }));
    expect(iso.statusCode, iso.body).toBe(202);
    expect(iso.json().status).toBe('scheduled');
    const read = await t.call(apiKey, 'GET', `/v1/messages/${iso.json().id}`);
    expect(read.json()).toMatchObject({ status: 'scheduled', dueAt: new Date(at).toISOString() });

    const epoch = await t.send(apiKey, sms(freshPhone(), { sendAt: at }));
    expect(epoch.statusCode, epoch.body).toBe(202);
    expect(epoch.json().status).toBe('scheduled');
  });

  it('an Idempotency-Key replay answers 200 with the same id and consumes nothing', async () => {
    const tenant = await t.createTenant();
    expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, SEED_RULES)).statusCode).toBe(200);
    const to = freshPhone();
    const first = await t.send(tenant.apiKey, sms(to), { 'idempotency-key': 'order-42' });
    expect(first.statusCode, first.body).toBe(202);
    const id = first.json().id;

    // Four replays against a 3-per-minute rule: none of them counts.
    for (let i = 0; i < 4; i++) {
      const replay = await t.send(tenant.apiKey, sms(to), { 'idempotency-key': 'order-42' });
      expect(replay.statusCode, replay.body).toBe(200);
      expect(replay.json()).toEqual({ id, status: 'queued' });
    }
    // The recipient still has two of its three sends this minute.
    expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    expectError(await t.send(tenant.apiKey, sms(to)), 429, 'RATE_LIMITED');

    // Key order does not make a different request.
    const reordered = await t.send(tenant.apiKey, { body: 'your code is 1234', to, channel: 'sms' }, { 'idempotency-key': 'order-42' });
    expect(reordered.statusCode, reordered.body).toBe(200);
    expect(reordered.json().id).toBe(id);
  });

  it('the same Idempotency-Key with another body is 409 CONFLICT; keys are per tenant', async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const to = freshPhone();
    expect((await t.send(a.apiKey, sms(to), { 'idempotency-key': 'k1' })).statusCode).toBe(202);
    const conflict = await t.send(a.apiKey, sms(to, { body: 'another text' }), { 'idempotency-key': 'k1' });
    expectError(conflict, 409, 'CONFLICT');
    // Another tenant may use the same key for its own message.
    const other = await t.send(b.apiKey, sms(to, { body: 'another text' }), { 'idempotency-key': 'k1' });
    expect(other.statusCode, other.body).toBe(202);
  });

  it('a replay of a scheduled message answers its stored status', async () => {
    const { apiKey } = await t.createTenant();
    const body = sms(freshPhone(), { sendAt: t.clock.now() + 600_000 });
    const first = await t.send(apiKey, body, { 'idempotency-key': 'sched' });
    expect(first.statusCode).toBe(202);
    const replay = await t.send(apiKey, body, { 'idempotency-key': 'sched' });
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ id: first.json().id, status: 'scheduled' });
  });
});

describe('GET and DELETE /v1/messages/:id', () => {
  it("another tenant's message and an unknown id are 404 NOT_FOUND", async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const id = (await t.send(a.apiKey, sms(freshPhone()))).json().id;
    expectError(await t.call(b.apiKey, 'GET', `/v1/messages/${id}`), 404, 'NOT_FOUND');
    expectError(await t.call(a.apiKey, 'GET', '/v1/messages/no-such-id'), 404, 'NOT_FOUND');
    expectError(await t.call(a.apiKey, 'GET', `/v1/messages/${'x'.repeat(65)}`), 400, 'INVALID_REQUEST');
  });

  it('refuses query parameters it does not take, like every other route but the probes', async () => {
    const { apiKey } = await t.createTenant();
    const id = (await t.send(apiKey, sms(freshPhone()))).json().id;
    expect((await t.call(apiKey, 'GET', `/v1/messages/${id}`)).statusCode).toBe(200);
    expectError(await t.call(apiKey, 'GET', `/v1/messages/${id}?attempts=all`), 400, 'INVALID_REQUEST');
    expectError(await t.call(apiKey, 'DELETE', `/v1/messages/${id}?force=1`), 400, 'INVALID_REQUEST');
  });

  it('cancels a scheduled message; a second cancel is still OK', async () => {
    const { apiKey } = await t.createTenant();
    const id = (await t.send(apiKey, sms(freshPhone(), { sendAt: t.clock.now() + 600_000 }))).json().id;
    const cancel = await t.call(apiKey, 'DELETE', `/v1/messages/${id}`);
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(cancel.json()).toEqual({ id, status: 'canceled' });
    expect((await t.call(apiKey, 'GET', `/v1/messages/${id}`)).json().status).toBe('canceled');
    // As many clients send it: a JSON content type on a DELETE without a body.
    const again = await t.app.inject({
      method: 'DELETE',
      url: `/v1/messages/${id}`,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().status).toBe('canceled');
    // No body is no body: a route that needs one still refuses its absence.
    const json = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    expectError(await t.app.inject({ method: 'POST', url: '/v1/messages', headers: json }), 400, 'INVALID_REQUEST');
    const rules = await t.app.inject({
      method: 'PUT',
      url: '/v1/admin/tenants/any/rules/sms',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    });
    expectError(rules, 400, 'INVALID_REQUEST');
  });

  it("cancelling another tenant's message or an unknown one is 404 and changes nothing", async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const id = (await t.send(a.apiKey, sms(freshPhone(), { sendAt: t.clock.now() + 600_000 }))).json().id;
    expectError(await t.call(b.apiKey, 'DELETE', `/v1/messages/${id}`), 404, 'NOT_FOUND');
    expect((await t.call(a.apiKey, 'GET', `/v1/messages/${id}`)).json().status).toBe('scheduled');
    expectError(await t.call(a.apiKey, 'DELETE', '/v1/messages/unknown'), 404, 'NOT_FOUND');
  });

  it('a message already claimed for sending cannot be canceled: 409 CONFLICT', async () => {
    const { apiKey } = await t.createTenant();
    const id = (await t.send(apiKey, sms(freshPhone()))).json().id;
    await t.runtime.repositories.messages.drain();
    // What a dispatcher does first: claim the row (the real repository, no worker needed).
    const claimed = await t.runtime.repositories.messages.claim(id, { now: t.clock.now(), leaseMs: 5000 });
    expect(claimed?.status).toBe('sending');
    expectError(await t.call(apiKey, 'DELETE', `/v1/messages/${id}`), 409, 'CONFLICT');
    expect((await t.call(apiKey, 'GET', `/v1/messages/${id}`)).json().status).toBe('sending');
  });
});

describe('POST /v1/frequency/check', () => {
  const rules = [{ windowSeconds: 300, limit: 2 }];

  it('answers allowed until the limit, then not allowed (200: a decision is data)', async () => {
    const { apiKey } = await t.createTenant();
    const check = () => t.call(apiKey, 'POST', '/v1/frequency/check', { subject: 'user-1', action: 'send-code', rules });
    const first = await check();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ allowed: true, code: 'OK', counts: [0], retryAfterMs: 0 });
    expect((await check()).json()).toMatchObject({ allowed: true, counts: [1] });
    const third = (await check()).json();
    expect(third).toMatchObject({ allowed: false, code: 'RATE_LIMITED', rule: 0, counts: [2] });
    expect(third.retryAfterMs).toBeGreaterThan(0);

    // Another action, or another tenant, is another subject.
    const other = await t.call(apiKey, 'POST', '/v1/frequency/check', { subject: 'user-1', action: 'login', rules });
    expect(other.json().allowed).toBe(true);
    const b = await t.createTenant();
    const otherTenant = await t.call(b.apiKey, 'POST', '/v1/frequency/check', { subject: 'user-1', action: 'send-code', rules });
    expect(otherTenant.json().allowed).toBe(true);

    // The window moves with the clock.
    t.clock.advance(300_000);
    expect((await check()).json().allowed).toBe(true);
  });

  it('record:false only looks; the same requestId is counted once', async () => {
    const { apiKey } = await t.createTenant();
    const check = (extra: Record<string, unknown>) =>
      t.call(apiKey, 'POST', '/v1/frequency/check', { subject: 'user-2', action: 'send-code', rules, ...extra });
    for (let i = 0; i < 5; i++) {
      const peek = await check({ record: false });
      expect(peek.statusCode, peek.body).toBe(200);
      expect(peek.json()).toMatchObject({ allowed: true, counts: [0] });
    }
    expect((await check({ requestId: 'r1' })).json()).toMatchObject({ allowed: true, counts: [0] });
    expect((await check({ requestId: 'r1' })).json()).toMatchObject({ allowed: true, counts: [1] });
    expect((await check({ requestId: 'r2' })).json()).toMatchObject({ allowed: true, counts: [1] });
    expect((await check({ record: false })).json()).toMatchObject({ allowed: false, counts: [2] });
  });

  it('needs a valid key and a valid body', async () => {
    const body = { subject: 'u', action: 'a', rules };
    const noKey = await t.app.inject({ method: 'POST', url: '/v1/frequency/check', payload: body });
    expectError(noKey, 401, 'UNAUTHORIZED');
    expectError(await t.call('sk_unknown', 'POST', '/v1/frequency/check', body), 401, 'UNAUTHORIZED');
    const { apiKey } = await t.createTenant();
    expectError(await t.call(apiKey, 'POST', '/v1/frequency/check', { ...body, rules: [] }), 400, 'INVALID_REQUEST');
    expectError(
      await t.call(apiKey, 'POST', '/v1/frequency/check', { ...body, rules: [{ windowSeconds: 0, limit: 1 }] }),
      400,
      'INVALID_REQUEST',
    );
    // A tenant's own rules are held to 31 days: what it can make the limiter keep is its rate times that.
    const longest = { windowSeconds: 31 * 86_400, limit: 10 };
    expect((await t.call(apiKey, 'POST', '/v1/frequency/check', { ...body, rules: [longest] })).statusCode).toBe(200);
    expectError(
      await t.call(apiKey, 'POST', '/v1/frequency/check', { ...body, rules: [{ ...longest, windowSeconds: 31 * 86_400 + 1 }] }),
      400,
      'INVALID_REQUEST',
    );
  });

  it("draws on the tenant's requests per second, like its sends: over it is 429 QUOTA_EXCEEDED", async () => {
    const tenant = await t.createTenant();
    await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { qpsLimit: 2 });
    const check = (subject: string) =>
      t.call(tenant.apiKey, 'POST', '/v1/frequency/check', { subject, action: 'login', rules, record: subject !== 'look' });
    expect((await check('a')).statusCode).toBe(200);
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    // The bucket of 2 is empty: a third request, a check or a look, waits for the next token.
    expectError(await check('look'), 429, 'QUOTA_EXCEEDED'); // with Retry-After
    expectError(await t.send(tenant.apiKey, sms(freshPhone())), 429, 'QUOTA_EXCEEDED');
    t.clock.advance(1000);
    expect((await check('b')).statusCode).toBe(200);
  });
});

describe('admin API', () => {
  it('creates (201, key shown once), lists and reads tenants; unknown is 404', async () => {
    const created = await t.admin('POST', '/v1/admin/tenants', { name: 'billing team' });
    expect(created.statusCode, created.body).toBe(201);
    const tenant = created.json();
    // This app's tenants start with no rules (SLUICE_NEW_TENANT_RULES=none): the answer warns (new-tenant-rules.test.ts has the default).
    expect(tenant).toEqual({
      id: expect.any(String),
      name: 'billing team',
      apiKey: expect.any(String),
      rules: [],
      warnings: [expect.stringContaining('sends to one recipient are unlimited until rules are set')],
    });

    const list = await t.admin('GET', '/v1/admin/tenants');
    expect(list.statusCode).toBe(200);
    const listed = list.json().tenants.find((item: { id: string }) => item.id === tenant.id);
    expect(listed).toMatchObject({ id: tenant.id, name: 'billing team', status: 'active' });
    expect(list.body).not.toContain(tenant.apiKey);

    const read = await t.admin('GET', `/v1/admin/tenants/${tenant.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: tenant.id, status: 'active', qpsLimit: null, dailyQuotas: { sms: null } });
    expect(read.body).not.toContain(tenant.apiKey);

    expectError(await t.admin('GET', '/v1/admin/tenants/no-such-tenant'), 404, 'NOT_FOUND');
    expectError(await t.admin('PATCH', '/v1/admin/tenants/no-such-tenant', { status: 'suspended' }), 404, 'NOT_FOUND');
    expectError(await t.admin('PUT', '/v1/admin/tenants/no-such-tenant/rules/sms', SEED_RULES), 404, 'NOT_FOUND');
    expectError(await t.admin('POST', '/v1/admin/tenants', { name: '' }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, {}), 400, 'INVALID_REQUEST');
  });

  it('a suspended tenant gets 403 TENANT_SUSPENDED; resumed, it sends again', async () => {
    const tenant = await t.createTenant();
    const patch = await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { status: 'suspended' });
    expect(patch.statusCode, patch.body).toBe(200);
    expect(patch.json().status).toBe('suspended');
    expectError(await t.send(tenant.apiKey, sms(freshPhone())), 403, 'TENANT_SUSPENDED');
    await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { status: 'active' });
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
  });

  it('API keys: a new key revokes the others at once (a leak), or keeps them for a rollover; one key can be revoked', async () => {
    const tenant = await t.createTenant();
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202); // cached by now

    const rollover = await t.admin('POST', `/v1/admin/tenants/${tenant.id}/keys?keepOthers=true`);
    expect(rollover.statusCode, rollover.body).toBe(201);
    const second = rollover.json() as { keyId: string; apiKey: string };
    expect(second.apiKey).toMatch(/^sk_/);
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    expect((await t.send(second.apiKey, sms(freshPhone()))).statusCode).toBe(202);

    const listed = (await t.admin('GET', `/v1/admin/tenants/${tenant.id}/keys`)).json() as {
      keys: { id: string; prefix: string; revokedAt: string | null }[];
    };
    expect(listed.keys).toHaveLength(2);
    expect(listed.keys.map((key) => key.revokedAt)).toEqual([null, null]);
    expect(JSON.stringify(listed)).not.toContain(second.apiKey);
    expect(second.apiKey.startsWith(listed.keys[1]!.prefix)).toBe(true);

    // Revoking the first key: it stops working at once, though it was cached.
    const revoke = await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/keys/${listed.keys[0]!.id}`);
    expect(revoke.json()).toEqual({ revoked: true });
    expectError(await t.send(tenant.apiKey, sms(freshPhone())), 401, 'UNAUTHORIZED');
    expectError(await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/keys/${listed.keys[0]!.id}`), 404, 'NOT_FOUND');

    // A new key without keepOthers: the leaked one is dead everywhere the moment this answers.
    const third = (await t.admin('POST', `/v1/admin/tenants/${tenant.id}/keys`)).json() as { apiKey: string };
    expectError(await t.send(second.apiKey, sms(freshPhone())), 401, 'UNAUTHORIZED');
    expect((await t.send(third.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    expectError(await t.admin('POST', '/v1/admin/tenants/no-such-tenant/keys'), 404, 'NOT_FOUND');
  });

  it('qpsLimit: the request over it is 429 QUOTA_EXCEEDED with Retry-After; a second later it passes', async () => {
    const tenant = await t.createTenant();
    const patch = await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { qpsLimit: 2 });
    expect(patch.json().qpsLimit).toBe(2);
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    const error = expectError(await t.send(tenant.apiKey, sms(freshPhone())), 429, 'QUOTA_EXCEEDED');
    expect(error.retryAfterSeconds).toBe(1);
    t.clock.advance(1000);
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
  });

  it('dailyQuotas: per channel; the request over it is 429 QUOTA_EXCEEDED until the next UTC day', async () => {
    const tenant = await t.createTenant();
    const patch = await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { dailyQuotas: { sms: 2 } });
    expect(patch.statusCode, patch.body).toBe(200);
    expect(patch.json().dailyQuotas).toMatchObject({ sms: 2, email: null });
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    const response = await t.send(tenant.apiKey, sms(freshPhone()));
    expectError(response, 429, 'QUOTA_EXCEEDED');
    const untilMidnight = 86_400_000 - (t.clock.now() % 86_400_000);
    expect(Number(response.headers['retry-after'])).toBe(Math.max(1, Math.ceil(untilMidnight / 1000)));
    // Email has its own budget.
    const email = await t.send(tenant.apiKey, { channel: 'email', to: 'a@example.com', subject: 's', body: 'b' });
    expect(email.statusCode, email.body).toBe(202);
  });

  it('quotas the limiter cannot count are refused (400) on create and patch; the largest accepted still lets sends through', async () => {
    expectError(await t.admin('POST', '/v1/admin/tenants', { name: 'too-fast', qpsLimit: 99_999_999_999 }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('POST', '/v1/admin/tenants', { name: 'too-fast', qpsLimit: 1_000_001 }), 400, 'INVALID_REQUEST');
    const tenant = await t.createTenant();
    const patch = (body: unknown) => t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, body);
    expectError(await patch({ qpsLimit: 1_000_001 }), 400, 'INVALID_REQUEST');
    expectError(await patch({ dailyQuotas: { webhook: 5_000_000_000 } }), 400, 'INVALID_REQUEST');
    expectError(await patch({ dailyQuotas: { sms: 1_000_000_001 } }), 400, 'INVALID_REQUEST');
    expect((await t.admin('GET', `/v1/admin/tenants/${tenant.id}`)).json()).toMatchObject({
      qpsLimit: null,
      dailyQuotas: { webhook: null },
    });

    const fast = await t.admin('POST', '/v1/admin/tenants', { name: 'fastest', qpsLimit: 1_000_000 });
    expect(fast.statusCode, fast.body).toBe(201);
    const largest = await t.admin('PATCH', `/v1/admin/tenants/${fast.json().id}`, {
      dailyQuotas: { sms: 1_000_000_000, email: 1_000_000_000, webhook: 1_000_000_000 },
    });
    expect(largest.statusCode, largest.body).toBe(200);
    expect((await t.send(fast.json().apiKey, { channel: 'webhook', to: 'ops-alerts', body: 'x' })).statusCode).toBe(202);
    expect((await t.send(fast.json().apiKey, sms(freshPhone()))).statusCode).toBe(202);
  });

  it('RATE_LIMITED says the rule in words: "at most 1 webhook message per 60 s"', async () => {
    const tenant = await t.createTenant();
    const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/webhook`, { rules: [{ windowSeconds: 60, limit: 1 }] });
    expect(put.statusCode, put.body).toBe(200);
    const hook = { channel: 'webhook', to: 'https://hooks.example.com/one', body: 'hi' };
    expect((await t.send(tenant.apiKey, hook)).statusCode).toBe(202);
    const error = expectError(await t.send(tenant.apiKey, hook), 429, 'RATE_LIMITED');
    expect(error.message).toBe('at most 1 webhook message per 60 s to this recipient');
  });

  it('rules: the 4th send in a minute is 429 RATE_LIMITED, then BANNED; lifting the ban lets sends through', async () => {
    const tenant = await t.createTenant();
    const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, SEED_RULES);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ channel: 'sms', rules: SEED_RULES.rules.map((rule) => ({ banSeconds: 0, ...rule })) });
    const read = await t.admin('GET', `/v1/admin/tenants/${tenant.id}/rules/sms`);
    expect(read.json().rules).toHaveLength(3);

    const to = freshPhone();
    for (let i = 0; i < 3; i++) expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    // Another recipient is another subject.
    expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);

    const limited = await t.send(tenant.apiKey, sms(to));
    const error = expectError(limited, 429, 'RATE_LIMITED');
    expect(error).toMatchObject({ rule: 0, limit: 3, windowSeconds: 60, message: 'at most 3 sms messages per 60 s to this recipient' });
    // Hitting a rule with a ban: the earliest retry is the ban's end.
    expect(limited.headers['retry-after']).toBe('600');

    t.clock.advance(100_000);
    const banned = await t.send(tenant.apiKey, sms(to));
    expectError(banned, 429, 'BANNED');
    expect(banned.headers['retry-after']).toBe('500');

    const lift = await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/bans/sms/${encodeURIComponent(to)}`);
    expect(lift.statusCode, lift.body).toBe(200);
    expect(lift.json()).toEqual({ lifted: true });
    // The minute has passed, the ban is gone: the recipient may be sent to again.
    expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    const again = await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/bans/sms/${encodeURIComponent(to)}`);
    expect(again.json()).toEqual({ lifted: false });
    expectError(await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/bans/sms/not-a-phone`), 400, 'INVALID_REQUEST');
  });

  it('lifting a ban with resetCounts=true also forgets the counted sends: the next one is not banned again', async () => {
    const tenant = await t.createTenant();
    expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, SEED_RULES)).statusCode).toBe(200);
    const to = freshPhone();
    const ban = `/v1/admin/tenants/${tenant.id}/bans/sms/${encodeURIComponent(to)}`;
    for (let i = 0; i < 3; i++) expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    expectError(await t.send(tenant.apiKey, sms(to)), 429, 'RATE_LIMITED'); // and banned
    // Lifted alone, within the minute: the three counted sends refuse the next and ban again.
    expect((await t.admin('DELETE', ban)).json()).toEqual({ lifted: true });
    expectError(await t.send(tenant.apiKey, sms(to)), 429, 'RATE_LIMITED');
    // Lifted with its counts forgotten: a fresh start.
    expect((await t.admin('DELETE', `${ban}?resetCounts=true`)).json()).toEqual({ lifted: true });
    expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    expectError(await t.admin('DELETE', `${ban}?resetCounts=yes`), 400, 'INVALID_REQUEST');
  });

  it('rules: what GET answers can be PUT back as it is (GET → PUT → GET is the same)', async () => {
    const tenant = await t.createTenant();
    const url = `/v1/admin/tenants/${tenant.id}/rules/sms`;
    const roundTrip = async (body: unknown) => {
      const put = await t.admin('PUT', url, body);
      expect(put.statusCode, put.body).toBe(200);
      const read = (await t.admin('GET', url)).json();
      expect(put.json()).toEqual(read);
      // The whole answer, channel and version included, goes back as it is.
      const again = await t.admin('PUT', url, read);
      expect(again.statusCode, again.body).toBe(200);
      const { version, ...reread } = (await t.admin('GET', url)).json();
      expect(version).toBe(read.version + 1);
      expect(reread).toEqual({ ...read, version: undefined });
      const { channel, version: _, ...shape } = read;
      expect(channel).toBe('sms');
      return shape;
    };

    const staticSet = await roundTrip({
      rules: [
        { windowSeconds: 60, limit: 3, banSeconds: 600 },
        { windowSeconds: 86_400, limit: 50, algorithm: 'sliding-counter' },
      ],
      fallback: { mode: 'static', rules: [{ windowSeconds: 60, limit: 10 }] },
    });
    expect(staticSet).toEqual({
      rules: [
        { windowSeconds: 60, limit: 3, banSeconds: 600 },
        { windowSeconds: 86_400, limit: 50, banSeconds: 0, algorithm: 'sliding-counter' },
      ],
      fallback: { mode: 'static', rules: [{ windowSeconds: 60, limit: 10, banSeconds: 0 }] },
    });
    for (const mode of ['local', 'allow', 'deny']) {
      expect(await roundTrip({ rules: [{ windowSeconds: 60, limit: 3 }], fallback: { mode } })).toMatchObject({ fallback: { mode } });
    }
    expect(await roundTrip({ rules: [] })).toEqual({ rules: [], fallback: null });

    // Rules under another mode than static are refused, not stored to be ignored and echoed.
    const refused = expectError(
      await t.admin('PUT', url, { rules: [], fallback: { mode: 'local', rules: [{ windowSeconds: 60, limit: 10 }] } }),
      400,
      'INVALID_REQUEST',
    );
    expect(refused.field).toBe('fallback.rules');
    const other = expectError(await t.admin('PUT', url, { channel: 'email', rules: [] }), 400, 'INVALID_REQUEST');
    expect(other.field).toBe('channel');
    // A set stored that way before is shown without them, so it too can be PUT back.
    await t.runtime.repositories.rules.set(tenant.id, 'sms', {
      rules: [],
      fallback: { mode: 'allow', rules: [{ windowSeconds: 60, limit: 10, banSeconds: 0 }] },
    });
    expect(await roundTrip((await t.admin('GET', url)).json())).toEqual({ rules: [], fallback: { mode: 'allow' } });
  });

  it('rules that cannot be valid are 400 INVALID_REQUEST', async () => {
    const tenant = await t.createTenant();
    const put = (body: unknown) => t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, body);
    expectError(await put({ rules: [{ windowSeconds: 60, limit: 0 }] }), 400, 'INVALID_REQUEST');
    expectError(await put({ rules: [{ windowSeconds: 60 }] }), 400, 'INVALID_REQUEST');
    expectError(await put({ rules: [{ windowSeconds: 60, limit: 1, algorithm: 'magic' }] }), 400, 'INVALID_REQUEST');
    expectError(await put({ rules: [], fallback: { mode: 'static' } }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/fax`, SEED_RULES), 400, 'INVALID_REQUEST');
  });

  it('blacklist: a listed recipient is 403 BLACKLISTED in any spelling; removed, it is sendable again', async () => {
    const tenant = await t.createTenant();
    const to = freshPhone();
    const national = to.slice(3);
    const add = await t.admin('POST', `/v1/admin/tenants/${tenant.id}/blacklist`, {
      channel: 'sms',
      recipients: [national, 'nonsense'],
      reason: 'complaint',
    });
    expect(add.statusCode, add.body).toBe(200);
    expect(add.json()).toEqual({ added: [to], invalid: ['nonsense'] });
    expectError(await t.send(tenant.apiKey, sms(to)), 403, 'BLACKLISTED');
    expectError(await t.send(tenant.apiKey, sms(national)), 403, 'BLACKLISTED');
    // Only this tenant's list.
    const other = await t.createTenant();
    expect((await t.send(other.apiKey, sms(to))).statusCode).toBe(202);

    const remove = await t.app.inject({
      method: 'DELETE',
      url: `/v1/admin/tenants/${tenant.id}/blacklist`,
      headers: { authorization: 'Bearer admin-token' },
      payload: { channel: 'sms', recipients: [to] },
    });
    expect(remove.statusCode, remove.body).toBe(200);
    expect(remove.json()).toEqual({ removed: 1, invalid: [] });
    expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
  });

  it('a blacklist entry for every channel (*) applies to email too', async () => {
    const tenant = await t.createTenant();
    const add = await t.admin('POST', `/v1/admin/tenants/${tenant.id}/blacklist`, { recipients: ['Blocked@Example.com'] });
    expect(add.json().added).toEqual(['blocked@example.com']);
    const email = { channel: 'email', to: 'Blocked@EXAMPLE.com', subject: 's', body: 'b' };
    expectError(await t.send(tenant.apiKey, email), 403, 'BLACKLISTED');
  });

  it('without the admin token, or with a wrong one, admin calls are 401 UNAUTHORIZED', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v1/admin/tenants' }), 401, 'UNAUTHORIZED');
    // The router decodes percent-escapes before it matches: any spelling of an admin path is guarded.
    for (const url of ['/v1/%61dmin/tenants', '/%761/admin/tenants', '/v1/admin%2Ftenants', '/v1//admin/tenants']) {
      const response = await t.app.inject({ method: 'POST', url, payload: { name: `spelled-${url.length}` } });
      expect([401, 404], `${url}: ${response.body}`).toContain(response.statusCode);
    }
    expectError(await t.app.inject({ method: 'GET', url: '/v1/%61dmin/tenants' }), 401, 'UNAUTHORIZED');
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/admin/tenants', headers: { authorization: 'Bearer admin-tokeN' } }),
      401,
      'UNAUTHORIZED',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/admin/tenants', headers: { authorization: 'admin-token' }, payload: { name: 'x' } }),
      401,
      'UNAUTHORIZED',
    );
    // A tenant key is not an admin token.
    const { apiKey } = await t.createTenant();
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/admin/tenants', headers: { authorization: `Bearer ${apiKey}` } }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('health and docs', () => {
  it('/healthz and /readyz answer 200; readiness lists its checks', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json()).toMatchObject({
      status: 'ready',
      checks: { database: { ok: true }, migrations: { ok: true }, limiter: { ok: true } },
    });
  });

  it("/readyz says a database is unreachable in fixed words, not the driver's (addresses, paths)", async () => {
    const broken = await startApp();
    try {
      await broken.runtime.database.close();
      const ready = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks.database).toEqual({ ok: false, detail: 'unreachable (see the log)' });
      expect(ready.body).not.toMatch(/not open|sqlite|\//i);
      // An admin call meets the same database: 503 UNAVAILABLE (retry), as a send would, not 500.
      expectError(await broken.admin('GET', '/v1/admin/tenants'), 503, 'UNAVAILABLE');

      // A frozen server (a ping that never answers) shows as not ready, rather than hanging the probe.
      broken.runtime.database.ping = () => new Promise<void>(() => undefined);
      const frozen = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(frozen.statusCode).toBe(503);
      expect(frozen.json().checks.database).toEqual({ ok: false, detail: 'unreachable (see the log)' });
    } finally {
      await broken.close().catch(() => undefined);
    }
  });

  it('/docs/json is an OpenAPI document listing the API', async () => {
    const docs = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(docs.statusCode).toBe(200);
    const document = docs.json();
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/v1/messages', '/v1/messages/{id}', '/v1/frequency/check', '/v1/admin/tenants']),
    );
    expect(document.paths['/v1/messages'].post).toBeDefined();
  });
});

describe('error codes', () => {
  let apiKey: string;
  beforeAll(async () => {
    apiKey = (await t.createTenant()).apiKey;
  });

  const raw = (payload: string, contentType = 'application/json', key = apiKey) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      payload,
    });

  it.each([
    ['malformed JSON', '{"channel": "sms", '],
    ['an empty JSON body', ''],
    ['a JSON array', '[]'],
    ['a JSON string', '"sms"'],
    ['null', 'null'],
  ])('INVALID_REQUEST: %s', async (_name, payload) => {
    expectError(await raw(payload), 400, 'INVALID_REQUEST');
  });

  const invalidBodies: [string, () => Record<string, unknown>][] = [
    ['channel of the wrong type', () => ({ channel: 1, to: phone(1), body: 'x' })],
    ['to of the wrong type', () => ({ channel: 'sms', to: 13_800_000_000, body: 'x' })],
    ['params with a value neither string nor number', () => ({ channel: 'sms', to: phone(1), template: 't', params: { code: true } })],
    [
      'a webhook URL over 320 characters once percent-encoded',
      () => ({ channel: 'webhook', to: `https://h.example.com/${'界'.repeat(200)}`, body: 'x' }),
    ],
    ['a params name over 64 characters', () => ({ channel: 'sms', to: phone(1), template: 't', params: { ['k'.repeat(65)]: 'v' } })],
    ['an unknown field', () => ({ ...sms(phone(1)), urgency: 'high' })],
    ['an unknown priority', () => ({ ...sms(phone(1)), priority: 'high' })],
    ['a missing to', () => ({ channel: 'sms', body: 'x' })],
    ['an invalid phone', () => sms('12345')],
    ['letters as a phone', () => sms('call me maybe')],
    ['an invalid email', () => ({ channel: 'email', to: 'not-an-email', subject: 's', body: 'b' })],
    ['an email without a domain dot', () => ({ channel: 'email', to: 'a@localhost', subject: 's', body: 'b' })],
    ['an unknown channel', () => ({ channel: 'fax', to: phone(1), body: 'x' })],
    ['sendAt in the past', () => sms(phone(1), { sendAt: new Date(t.clock.now() - 60_000).toISOString() })],
    ['sendAt beyond the horizon', () => sms(phone(1), { sendAt: t.clock.now() + 31 * 86_400_000 })],
    ['sendAt not a date', () => sms(phone(1), { sendAt: 'tomorrow' })],
    ['sendAt negative', () => sms(phone(1), { sendAt: -1 })],
    ['sms without body or template', () => ({ channel: 'sms', to: phone(1) })],
    ['sms with an empty body', () => ({ channel: 'sms', to: phone(1), body: '' })],
    ['email without subject', () => ({ channel: 'email', to: 'a@example.com', body: 'b' })],
    ['email without body or html', () => ({ channel: 'email', to: 'a@example.com', subject: 's' })],
    ['webhook without body', () => ({ channel: 'webhook', to: 'ops-alerts' })],
    ['a body over its maximum length', () => sms(phone(1), { body: 'x'.repeat(32_769) })],
  ];
  it.each(invalidBodies)('INVALID_REQUEST: %s', async (_name, body) => {
    expectError(await t.send(apiKey, body()), 400, 'INVALID_REQUEST');
  });

  it('sendAt in epoch seconds is named as such, not only as in the past', async () => {
    const inSeconds = Math.floor(t.clock.now() / 1000) + 60;
    const error = expectError(await t.send(apiKey, sms(phone(1), { sendAt: inSeconds })), 400, 'INVALID_REQUEST');
    expect(error.message).toContain('looks like epoch seconds');
    const past = expectError(await t.send(apiKey, sms(phone(1), { sendAt: t.clock.now() - 60_000 })), 400, 'INVALID_REQUEST');
    expect(past.message).toBe('`sendAt` is in the past');
  });

  it.each([
    ['too long', 'k'.repeat(129)],
    ['with a space', 'has space'],
    ['empty', ''],
  ])('INVALID_REQUEST: an Idempotency-Key %s', async (_name, key) => {
    const error = expectError(await t.send(apiKey, sms(phone(1)), { 'idempotency-key': key }), 400, 'INVALID_REQUEST');
    if (key) expect(error.field).toBe('Idempotency-Key');
  });

  it('a rejected request stores nothing', async () => {
    const tenant = await t.createTenant();
    const before = await t.runtime.database.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenant.id)
      .executeTakeFirstOrThrow();
    for (const [, body] of invalidBodies) await t.send(tenant.apiKey, body());
    await t.runtime.repositories.messages.drain();
    const after = await t.runtime.database.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenant.id)
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('UNAUTHORIZED: a missing, unknown or malformed key', async () => {
    expectError(await t.app.inject({ method: 'POST', url: '/v1/messages', payload: sms(phone(1)) }), 401, 'UNAUTHORIZED');
    expectError(await t.send('sk_not_a_key', sms(phone(1))), 401, 'UNAUTHORIZED');
    expectError(await t.send('x'.repeat(500), sms(phone(1))), 401, 'UNAUTHORIZED');
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { authorization: `Basic ${apiKey}` }, payload: sms(phone(1)) }),
      401,
      'UNAUTHORIZED',
    );
    expectError(await t.app.inject({ method: 'GET', url: '/v1/messages/some-id' }), 401, 'UNAUTHORIZED');
    expectError(await t.app.inject({ method: 'DELETE', url: '/v1/messages/some-id' }), 401, 'UNAUTHORIZED');
  });

  it('UNAUTHORIZED comes first: without a valid key the body is not read, so an invalid, unsupported or oversized one is 401 too', async () => {
    const post = (url: string, payload: string, contentType: string) =>
      t.app.inject({ method: 'POST', url, headers: { authorization: 'Bearer sk_not_a_key', 'content-type': contentType }, payload });
    expectError(await post('/v1/messages', '{}', 'application/json'), 401, 'UNAUTHORIZED');
    expectError(await post('/v1/messages', '{"channel":', 'application/json'), 401, 'UNAUTHORIZED');
    expectError(await post('/v1/messages', 'hello', 'text/plain'), 401, 'UNAUTHORIZED');
    expectError(
      await post('/v1/messages', JSON.stringify(sms(phone(1), { body: 'x'.repeat(200_000) })), 'application/json'),
      401,
      'UNAUTHORIZED',
    );
    expectError(await post('/v1/frequency/check', '{}', 'application/json'), 401, 'UNAUTHORIZED');
    expectError(await t.app.inject({ method: 'GET', url: `/v1/messages/${'x'.repeat(100)}` }), 401, 'UNAUTHORIZED');
  });

  it('INVALID_REQUEST: a value outside an enum names the allowed values', async () => {
    const tenant = await t.createTenant();
    const error = expectError(await t.send(tenant.apiKey, sms(phone(1), { channel: 'fax' })), 400, 'INVALID_REQUEST');
    expect(error.message).toContain('body/channel must be one of sms, email, webhook');
    expect(error.message).not.toContain('allowed values');
  });

  it('NOT_FOUND: an unknown route', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v2/nothing?x=1' }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ method: 'PUT', url: '/v1/messages' }), 404, 'NOT_FOUND');
  });

  it('UNSUPPORTED_MEDIA_TYPE: a form or XML body', async () => {
    expectError(await raw('channel=sms', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await raw('<message/>', 'application/xml'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('UNSUPPORTED_MEDIA_TYPE: a text/plain body', async () => {
    expectError(await raw(JSON.stringify(sms(phone(1))), 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('PAYLOAD_TOO_LARGE: a body over SLUICE_BODY_LIMIT_BYTES', async () => {
    const small = await startApp({ SLUICE_BODY_LIMIT_BYTES: '1024' });
    try {
      const tenant = await small.createTenant();
      const fits = await small.send(tenant.apiKey, sms(phone(1), { body: 'x'.repeat(900) }));
      expect(fits.statusCode, fits.body).toBe(202);
      const refused = expectError(await small.send(tenant.apiKey, sms(phone(1), { body: 'x'.repeat(2000) })), 413, 'PAYLOAD_TOO_LARGE');
      // The answer states the limit met.
      expect(refused).toMatchObject({ message: expect.stringContaining('1024 bytes (SLUICE_BODY_LIMIT_BYTES)'), limitBytes: 1024 });
    } finally {
      await small.close();
    }
  });

  it('the admin API is off (404 NOT_FOUND) when SLUICE_ADMIN_TOKEN is empty', async () => {
    const off = await startApp({ SLUICE_ADMIN_TOKEN: '' });
    try {
      expectError(await off.app.inject({ method: 'GET', url: '/v1/admin/tenants' }), 404, 'NOT_FOUND');
      const withToken = await off.app.inject({
        method: 'POST',
        url: '/v1/admin/tenants',
        headers: { authorization: 'Bearer ' },
        payload: { name: 'x' },
      });
      expectError(withToken, 404, 'NOT_FOUND');
      expectError(await off.app.inject({ method: 'GET', url: '/v1/%61dmin/tenants' }), 404, 'NOT_FOUND');
      // The rest of the API still works.
      expect((await off.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await off.close();
    }
  });
});

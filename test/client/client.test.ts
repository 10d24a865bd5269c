/**
 * `sluice/client` against a real sluice listening on a loopback port (the embedded default with a
 * manual clock): values and errors, Retry-After honoured, one Idempotency-Key per logical send.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SluiceClient } from '../../src/client/index.js';
import { ADMIN_TOKEN, handOver, phone, startApp, type TestApp } from '../http/support.js';

let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  // Loopback webhooks: the test has no DNS to resolve a public host with.
  t = await startApp({ SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true' });
  baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => t.close());

/** A client whose waits move the server's clock: Retry-After passes without real time. */
const clientFor = (apiKey: string, extra: Partial<ConstructorParameters<typeof SluiceClient>[0]> = {}) => {
  const waits: number[] = [];
  const client = new SluiceClient({
    baseUrl,
    apiKey,
    adminToken: ADMIN_TOKEN,
    sleep: async (ms) => {
      waits.push(ms);
      t.clock.advance(ms);
    },
    ...extra,
  });
  return { client, waits };
};

describe('SluiceClient', () => {
  it("listMessages lists the key's tenant's messages, newest first, a page at a time, and never another tenant's", async () => {
    const { client: admin } = clientFor('');
    const tenants = await Promise.all(['a', 'b'].map((name) => admin.admin.createTenant({ name: `list-${name}-${Date.now()}` })));
    const [a, b] = tenants.map((created) => {
      if (!created.ok) throw new Error(JSON.stringify(created.error));
      return clientFor(created.value.apiKey).client;
    });
    const sent: string[] = [];
    for (const n of [1, 2, 3]) {
      const result = await a!.send({ channel: 'sms', to: phone(700 + n), body: `a ${n}` });
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      sent.push(result.value.id);
    }
    const other = await b!.send({ channel: 'sms', to: phone(701), body: 'b 1' });
    if (!other.ok) throw new Error(JSON.stringify(other.error));

    const first = await a!.listMessages({ limit: 2 });
    if (!first.ok) throw new Error(JSON.stringify(first.error));
    expect(first.value.messages.map((message) => message.id)).toEqual([sent[2], sent[1]]);
    const second = await a!.listMessages({ limit: 2, cursor: first.value.nextCursor! });
    if (!second.ok) throw new Error(JSON.stringify(second.error));
    expect(second.value.messages.map((message) => message.id)).toEqual([sent[0]]);
    expect(second.value.nextCursor).toBeUndefined();
    // Tenant A searching the recipient B also sent to sees only its own message to it.
    const toShared = await a!.listMessages({ to: phone(701), channel: 'sms', status: 'queued' });
    if (!toShared.ok) throw new Error(JSON.stringify(toShared.error));
    expect(toShared.value.messages.map((message) => message.id)).toEqual([sent[0]]);
    // B sees its one message, none of A's.
    const ofB = await b!.listMessages();
    if (!ofB.ok) throw new Error(JSON.stringify(ofB.error));
    expect(ofB.value.messages.map((message) => message.id)).toEqual([other.value.id]);
    // Without a key: 401.
    const anonymous = await new SluiceClient({ baseUrl }).listMessages();
    expect(anonymous.status).toBe(401);
  });

  it('admin and tenant calls answer typed values; errors are values with the stable codes', async () => {
    const { client: admin } = clientFor('');
    const created = await admin.admin.createTenant({ name: `client-${Date.now()}` });
    expect(created.ok).toBe(true);
    if (!created.ok) return;
    const { client } = clientFor(created.value.apiKey);
    const sent = await client.send({ channel: 'sms', to: phone(73_000_001), body: 'hi' });
    expect(sent).toMatchObject({ ok: true, status: 202, value: { status: 'queued', replayed: false } });
    if (!sent.ok) return;
    const read = await client.getMessage(sent.value.id);
    expect(read).toMatchObject({ ok: true, value: { id: sent.value.id, channel: 'sms', to: phone(73_000_001) } });
    const missing = await client.getMessage('01NOSUCHMESSAGE0000000000');
    expect(missing).toMatchObject({ ok: false, status: 404, error: { code: 'NOT_FOUND' } });
    const invalid = await client.send({ channel: 'sms', to: 'not a phone', body: 'x' });
    expect(invalid).toMatchObject({ ok: false, status: 400, error: { code: 'INVALID_REQUEST' } });
    const unauthorized = await clientFor('sk_wrong').client.send({ channel: 'sms', to: phone(73_000_002), body: 'x' });
    expect(unauthorized).toMatchObject({ ok: false, status: 401, error: { code: 'UNAUTHORIZED' } });

    // The send weight and the backlog, typed.
    const weighted = await admin.admin.updateTenant(created.value.id, { sendWeight: 4 });
    expect(weighted).toMatchObject({ ok: true, value: { sendWeight: 4 } });
    expect(await admin.admin.updateTenant(created.value.id, { sendWeight: 0 })).toMatchObject({ ok: false, status: 400 });
    const backlog = await admin.admin.getTenantBacklog(created.value.id);
    expect(backlog.ok && backlog.value.lanes.find((lane) => lane.channel === 'sms' && lane.lane === 'transactional')).toMatchObject({
      due: 1,
      oldestDue: { id: sent.value.id },
    });
  });

  it('refuses an id of . or .. (URL resolution would climb to another route: tenants/../blacklist is the global list)', async () => {
    const { client: admin } = clientFor('');
    const before = await admin.admin.listBlacklist('global', { channel: 'sms' });
    expect(before.ok).toBe(true);
    const climbed = await admin.admin.addToBlacklist('..', { channel: 'sms', recipients: [phone(73_000_099)] });
    expect(climbed).toMatchObject({ ok: false, status: 0, error: { code: 'INVALID_REQUEST' } });
    expect(await admin.tenantConfig.listTemplates('.')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(await admin.admin.getTenant('')).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(await admin.admin.listBlacklist('global', { channel: 'sms' })).toEqual(before);
  });

  it('waits out Retry-After on 429 and retries; a wait past maxRetryDelayMs (a ban) is answered at once', async () => {
    const tenant = await t.createTenant();
    const { client: admin } = clientFor('');
    expect((await admin.admin.setRules(tenant.id, 'sms', { rules: [{ windowSeconds: 2, limit: 1 }] })).ok).toBe(true);
    const { client, waits } = clientFor(tenant.apiKey);
    const to = phone(73_000_010);
    expect((await client.send({ channel: 'sms', to, body: 'one' })).ok).toBe(true);
    const second = await client.send({ channel: 'sms', to, body: 'two' });
    expect(second).toMatchObject({ ok: true, status: 202 });
    expect(waits).toEqual([2000]);

    const banned = await t.createTenant();
    expect((await admin.admin.setRules(banned.id, 'sms', { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 600 }] })).ok).toBe(true);
    const patient = clientFor(banned.apiKey, { maxRetryDelayMs: 5000 });
    expect((await patient.client.send({ channel: 'sms', to, body: 'one' })).ok).toBe(true);
    const refused = await patient.client.send({ channel: 'sms', to, body: 'two' });
    expect(refused).toMatchObject({ ok: false, status: 429, error: { code: 'RATE_LIMITED', retryAfterSeconds: 600 } });
    expect(patient.waits).toEqual([]);
  });

  it('reuses one Idempotency-Key across retries: a send whose answer was lost is replayed, not doubled', async () => {
    const tenant = await t.createTenant();
    let calls = 0;
    const keys: (string | null)[] = [];
    const losingFirstAnswer: typeof fetch = async (input, init) => {
      calls++;
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      const response = await fetch(input, init);
      if (calls === 1) throw new TypeError('socket hang up'); // the server accepted it; the answer is lost
      return response;
    };
    const { client } = clientFor(tenant.apiKey, { fetch: losingFirstAnswer });
    const sent = await client.send({ channel: 'sms', to: phone(73_000_020), body: 'once' });
    expect(sent).toMatchObject({ ok: true, status: 200, value: { replayed: true } });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    const stored = await t.runtime.database.db.selectFrom('messages').select('id').where('tenant_id', '=', tenant.id).execute();
    expect(stored.map((row) => row.id)).toEqual([sent.ok ? sent.value.id : '']);
  });

  it('a network failure of a call that means something new each time is not retried', async () => {
    let calls = 0;
    const down: typeof fetch = async () => {
      calls++;
      throw new TypeError('connect ECONNREFUSED');
    };
    const { client } = clientFor('', { fetch: down });
    const created = await client.admin.createTenant({ name: 'never' });
    expect(created).toMatchObject({ ok: false, status: 0, error: { code: 'NETWORK' } });
    expect(calls).toBe(1);
  });

  it('tenantConfig: keys revoked, risk rule sets (a refused one is a 400 value), templates, quiet hours, webhooks', async () => {
    const tenant = await t.createTenant();
    const { client } = clientFor('');
    const config = client.tenantConfig;
    const issued = await client.admin.issueApiKey(tenant.id, { keepOthers: true });
    expect(issued.ok).toBe(true);
    if (!issued.ok) return;
    expect(await config.revokeApiKey(tenant.id, issued.value.keyId)).toMatchObject({ ok: true, value: { revoked: true } });
    const rules = [{ name: 'codes', kind: 'window' as const, key: ['user'], windowSeconds: 60, limit: 3 }];
    expect(await config.setRiskRuleSet(tenant.id, 'login', { rules })).toMatchObject({ ok: true, value: { action: 'login', version: 1 } });
    expect(await config.getRiskRuleSet(tenant.id, 'login')).toMatchObject({ ok: true, value: { rules: [{ name: 'codes' }] } });
    const refused = await config.setRiskRuleSet(tenant.id, 'login', { rules: [{ name: 'x', kind: 'last-n', key: ['user'] }] });
    expect(refused).toMatchObject({ ok: false, status: 400, error: { code: 'INVALID_REQUEST' } });
    expect(
      await config.putTemplate(tenant.id, 'sms', 'otp', { params: { code: { type: 'string' } }, body: 'code {{code}}' }),
    ).toMatchObject({
      ok: true,
      value: { version: 1 },
    });
    expect(await config.listTemplates(tenant.id)).toMatchObject({ ok: true, value: { templates: [{ name: 'otp' }] } });
    expect(await config.getTemplateVersions(tenant.id, 'sms', 'otp')).toMatchObject({ ok: true, value: { versions: [{ version: 1 }] } });
    expect(await config.retireTemplate(tenant.id, 'sms', 'otp')).toMatchObject({ ok: true, value: { retired: true } });
    const quiet = { timeZone: 'Asia/Shanghai', windows: [{ from: '22:00', to: '08:00' }], applies: 'bulk' as const };
    expect(await config.setQuietHours(tenant.id, 'sms', quiet)).toMatchObject({ ok: true, value: quiet });
    expect(await config.getQuietHours(tenant.id, 'sms')).toMatchObject({ ok: true, value: quiet });
    expect(await config.removeQuietHours(tenant.id, 'sms')).toMatchObject({ ok: true, value: { removed: true } });
    expect(await config.getQuietHours(tenant.id, 'sms')).toMatchObject({ ok: false, status: 404, error: { code: 'NOT_FOUND' } });
    const hook = await config.createWebhook(tenant.id, { url: 'http://127.0.0.1:9/sluice' });
    expect(hook).toMatchObject({ ok: true, status: 201, value: { secret: expect.any(String) } });
    if (!hook.ok) return;
    expect(await config.updateWebhook(tenant.id, hook.value.id, { enabled: false })).toMatchObject({ ok: true, value: { enabled: false } });
    expect(await config.listWebhooks(tenant.id)).toMatchObject({ ok: true, value: { webhooks: [{ id: hook.value.id }] } });
    const rotated = await config.rotateWebhookSecret(tenant.id, hook.value.id);
    expect(rotated.ok && rotated.value.secret !== hook.value.secret).toBe(true);
    expect(await config.listWebhookEvents(tenant.id, hook.value.id)).toMatchObject({ ok: true, value: { events: [] } });
    expect(await config.getWebhook(tenant.id, hook.value.id)).toMatchObject({ ok: true, value: { id: hook.value.id } });
    expect(await config.replayWebhookEvent(tenant.id, hook.value.id, 'nosuchevent')).toMatchObject({ ok: false, status: 404 });
    expect(await config.deleteWebhook(tenant.id, hook.value.id)).toMatchObject({ ok: true, value: { deleted: true } });
  });

  it('SMS pumping protection: prices, a policy (an oversize one is a 400 value), its status, feedback on a refused range', async () => {
    const tenant = await t.createTenant();
    const stranger = await t.createTenant();
    const { client: admin } = clientFor('');
    const { client } = clientFor(tenant.apiKey, { retries: 0 });
    const prices = { currency: 'USD', default: 0.05, countries: { GB: 0.04 } };
    expect(await admin.admin.setSmsPrices(prices)).toEqual({ ok: true, status: 200, value: prices });
    expect(await admin.admin.getSmsPrices()).toEqual({ ok: true, status: 200, value: prices });
    const config = admin.tenantConfig;
    expect(await config.getFraudPolicy(tenant.id)).toMatchObject({ ok: false, status: 404, error: { code: 'NOT_FOUND' } });
    const oversize = await config.setFraudPolicy(tenant.id, { safe: Array.from({ length: 1001 }, (_, i) => `+44${i}`) });
    expect(oversize).toMatchObject({ ok: false, status: 400, error: { code: 'INVALID_REQUEST' } });
    const policy = { mode: 'enforce' as const, prefixes: [{ digits: 8, windowSeconds: 3600, limit: 1 }] };
    expect(await config.setFraudPolicy(tenant.id, policy)).toEqual({ ok: true, status: 200, value: policy });
    expect(await config.getFraudPolicy(tenant.id)).toEqual({ ok: true, status: 200, value: policy });

    const first = await client.send({ channel: 'sms', to: '+447400123001', body: 'code 1' });
    expect(first.ok).toBe(true);
    const refused = await client.send({ channel: 'sms', to: '+447400123002', body: 'code 2' });
    expect(refused).toMatchObject({ ok: false, status: 429, error: { code: 'FRAUD_SUSPECTED', rule: 'prefix' } });
    if (!first.ok) return;
    expect(await client.sendFeedback(first.value.id)).toMatchObject({
      ok: false,
      status: 409,
      error: { code: 'CONFLICT', status: 'queued' },
    });
    await handOver(t, first.value.id);
    const confirmed = await client.sendFeedback(first.value.id);
    expect(confirmed).toMatchObject({ ok: true, status: 200, value: { id: first.value.id, outcome: 'confirmed' } });
    expect(await client.sendFeedback(first.value.id)).toEqual(confirmed);
    const { client: other } = clientFor(stranger.apiKey);
    expect(await other.sendFeedback(first.value.id)).toMatchObject({ ok: false, status: 404, error: { code: 'NOT_FOUND' } });
    expect(await config.getFraudStatus(tenant.id)).toMatchObject({
      ok: true,
      value: { mode: 'enforce', today: expect.arrayContaining([{ rule: 'prefix', outcome: 'refuse', count: 1 }]) },
    });
  });

  it('the console lookups: search by recipient page by page, a message timeline, a ban peek, a rules dry run', async () => {
    const tenant = await t.createTenant();
    const { client: admin } = clientFor('');
    const { client } = clientFor(tenant.apiKey);
    expect((await admin.admin.setRules(tenant.id, 'sms', { rules: [{ windowSeconds: 60, limit: 2, banSeconds: 60 }] })).ok).toBe(true);
    const to = phone(73_000_030);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const sent = await client.send({ channel: 'sms', to, body: `n${i}` });
      if (sent.ok) ids.push(sent.value.id);
      t.clock.advance(1);
    }
    const first = await admin.admin.searchMessages(tenant.id, { to: to.slice(3), channel: 'sms', limit: 1 });
    expect(first).toMatchObject({ ok: true, value: { messages: [{ id: ids[1] }], nextCursor: expect.any(String) } });
    if (!first.ok) return;
    const second = await admin.admin.searchMessages(tenant.id, { to, channel: 'sms', limit: 1, cursor: first.value.nextCursor! });
    expect(second).toMatchObject({ ok: true, value: { messages: [{ id: ids[0] }] } });
    expect(second.ok && second.value.nextCursor).toBeFalsy();
    const bad = await admin.admin.searchMessages(tenant.id, { to, limit: 500 });
    expect(bad).toMatchObject({ ok: false, status: 400, error: { code: 'INVALID_REQUEST' } });

    expect(await admin.admin.getMessage(tenant.id, ids[0]!)).toMatchObject({
      ok: true,
      value: { id: ids[0], tenantId: tenant.id, deliveryAttempts: [], events: [] },
    });
    const other = await t.createTenant();
    expect(await admin.admin.getMessage(other.id, ids[0]!)).toMatchObject({ ok: false, status: 404, error: { code: 'NOT_FOUND' } });

    expect(await admin.admin.getBanStatus(tenant.id, 'sms', to)).toMatchObject({
      ok: true,
      value: { banned: false, allowed: false, rules: [{ limit: 2, count: 2 }] },
    });
    const dryRun = await admin.admin.previewRules(tenant.id, 'sms', { sends: [{ atMs: 0 }, { atMs: 1 }, { atMs: 2 }, { atMs: 59_999 }] });
    expect(dryRun.ok && dryRun.value.results.map((result) => result.code ?? 'OK')).toEqual(['OK', 'OK', 'RATE_LIMITED', 'BANNED']);
  });

  it('every method maps to an operation of the OpenAPI document', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    const used = [
      'POST /v1/messages',
      'GET /v1/messages',
      'GET /v1/messages/{id}',
      'DELETE /v1/messages/{id}',
      'POST /v1/frequency/check',
      'POST /v1/messages/{id}/feedback',
      'PUT /v1/admin/prices/sms',
      'GET /v1/admin/prices/sms',
      'GET /v1/admin/tenants/{id}/fraud/sms',
      'PUT /v1/admin/tenants/{id}/fraud/sms',
      'GET /v1/admin/tenants/{id}/fraud/sms/status',
      'POST /v1/admin/tenants',
      'GET /v1/admin/tenants',
      'GET /v1/admin/tenants/{id}',
      'PATCH /v1/admin/tenants/{id}',
      'GET /v1/admin/tenants/{id}/keys',
      'POST /v1/admin/tenants/{id}/keys',
      'PUT /v1/admin/tenants/{id}/rules/{channel}',
      'GET /v1/admin/tenants/{id}/rules/{channel}',
      'DELETE /v1/admin/tenants/{id}/bans/{channel}/{to}',
      'GET /v1/admin/tenants/{id}/bans/{channel}/{to}',
      'POST /v1/admin/tenants/{id}/rules/{channel}/preview',
      'GET /v1/admin/tenants/{id}/messages',
      'GET /v1/admin/tenants/{id}/messages/{messageId}',
      'POST /v1/admin/tenants/{id}/blacklist',
      'DELETE /v1/admin/blacklist',
      'GET /v1/admin/blacklist',
      'POST /v1/admin/providers',
      'GET /v1/admin/providers',
      'PATCH /v1/admin/providers/{id}',
      'DELETE /v1/admin/providers/{id}',
      'DELETE /v1/admin/tenants/{id}/keys/{keyId}',
      'GET /v1/admin/tenants/{id}/risk/{action}',
      'PUT /v1/admin/tenants/{id}/risk/{action}',
      'GET /v1/admin/tenants/{id}/templates',
      'GET /v1/admin/tenants/{id}/templates/{channel}/{name}',
      'PUT /v1/admin/tenants/{id}/templates/{channel}/{name}',
      'DELETE /v1/admin/tenants/{id}/templates/{channel}/{name}',
      'GET /v1/admin/tenants/{id}/quiet-hours/{channel}',
      'PUT /v1/admin/tenants/{id}/quiet-hours/{channel}',
      'DELETE /v1/admin/tenants/{id}/quiet-hours/{channel}',
      'POST /v1/admin/tenants/{id}/webhooks',
      'GET /v1/admin/tenants/{id}/webhooks',
      'GET /v1/admin/tenants/{id}/webhooks/{webhookId}',
      'PATCH /v1/admin/tenants/{id}/webhooks/{webhookId}',
      'DELETE /v1/admin/tenants/{id}/webhooks/{webhookId}',
      'POST /v1/admin/tenants/{id}/webhooks/{webhookId}/rotate-secret',
      'GET /v1/admin/tenants/{id}/webhooks/{webhookId}/events',
      'POST /v1/admin/tenants/{id}/webhooks/{webhookId}/events/{eventId}/replay',
      'GET /v1/admin/tenants/{id}/backlog',
    ];
    expect(used.filter((operation) => !documented.has(operation))).toEqual([]);
    // The client's methods, counted: a new one must be added to the list above.
    const client = new SluiceClient({ baseUrl });
    const methods = ['send', 'listMessages', 'getMessage', 'cancelMessage', 'sendFeedback', 'checkFrequency'].filter(
      (name) => typeof (client as never)[name] === 'function',
    );
    expect(methods.length + Object.keys(client.admin).length + Object.keys(client.tenantConfig).length).toBe(used.length);
  });
});

describe('suppressions', () => {
  it('suppresses, reads, lists, lifts, and reads the consent record', async () => {
    const tenant = await t.createTenant();
    const { client } = clientFor(tenant.apiKey);
    const made = await client.suppress('email', 'Ann+news@Example.com', { category: 'news', reason: 'asked' });
    expect(made.ok && made.value.suppression.recipient).toBe('ann@example.com');
    const read = await client.getSuppression('email', 'ann@example.com');
    expect(read.ok && read.value.suppressed).toBe(true);
    const page = await client.listSuppressions({ category: 'news' });
    expect(page.ok && page.value.entries.length).toBe(1);
    const lifted = await client.unsuppress('email', 'ann@example.com', 'news');
    expect(lifted.ok && lifted.value.removed).toBe(true);
    const history = await client.getConsent('email', 'ann@example.com');
    expect(history.ok && history.value.records.map((record) => record.action)).toEqual(['suppressed', 'unsuppressed']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/storage/secret-box.js';
import { expectError, startApp, type TestApp } from './support.js';

describe('admin API: providers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  const smtp = (scope: string, extra: Record<string, unknown> = {}) => ({
    scope,
    channel: 'email',
    kind: 'smtp',
    name: 'relay',
    qps: 20,
    priority: 1,
    config: { host: '127.0.0.1', port: 2525, from: 'noreply@example.com' },
    secret: { user: 'mailer', password: 'hunter2-secret' },
    ...extra,
  });

  it('registers a tenant provider, never shows its secret, and stores it sealed', async () => {
    const tenant = await t.createTenant();
    const created = await t.admin('POST', '/v1/admin/providers', smtp(tenant.id));
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ scope: tenant.id, channel: 'email', kind: 'smtp', qps: 20, hasSecret: true, enabled: true });
    // Times as every other view has them: ISO 8601.
    expect(body.createdAt).toBe(new Date(body.createdAt).toISOString());
    expect(body.updatedAt).toBe(body.createdAt);
    expect(created.body).not.toContain('hunter2');
    const listed = await t.admin('GET', `/v1/admin/providers?scope=${tenant.id}`);
    expect(listed.json().providers).toHaveLength(1);
    expect(listed.body).not.toContain('hunter2');
    const raw = await t.runtime.database.db.selectFrom('providers').select('secret').where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(raw.secret).not.toContain('hunter2');
    expect(await t.runtime.repositories.providers.revealSecret(body.id)).toContain('hunter2');
  });

  it('refuses a provider whose config cannot build a client, an unknown tenant and a wrong channel', async () => {
    const tenant = await t.createTenant();
    expectError(await t.admin('POST', '/v1/admin/providers', smtp(tenant.id, { config: { port: 25 } })), 400, 'INVALID_REQUEST');
    expectError(await t.admin('POST', '/v1/admin/providers', smtp(tenant.id, { channel: 'sms' })), 400, 'INVALID_REQUEST');
    expectError(await t.admin('POST', '/v1/admin/providers', smtp('no-such-tenant')), 404, 'NOT_FOUND');
    expectError(await t.admin('POST', '/v1/admin/providers', { ...smtp(tenant.id), kind: 'carrier-pigeon' }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('POST', '/v1/admin/providers', { ...smtp(tenant.id), name: 'mail\u0000' }), 400, 'INVALID_REQUEST');
  });

  it('a name taken in the same scope and channel is 409 CONFLICT, on create and on rename; other scopes and channels may reuse it', async () => {
    const tenant = await t.createTenant();
    const consoleProvider = (scope: string, channel: string, name: string) => ({ scope, channel, kind: 'console', name, qps: 5 });
    const first = await t.admin('POST', '/v1/admin/providers', consoleProvider(tenant.id, 'sms', 'primary'));
    expect(first.statusCode, first.body).toBe(201);
    const duplicate = expectError(
      await t.admin('POST', '/v1/admin/providers', consoleProvider(tenant.id, 'sms', 'primary')),
      409,
      'CONFLICT',
    );
    expect(duplicate).toMatchObject({ name: 'primary', id: first.json().id });
    expect((await t.admin('GET', `/v1/admin/providers?scope=${tenant.id}&channel=sms`)).json().providers).toHaveLength(1);

    expect((await t.admin('POST', '/v1/admin/providers', consoleProvider(tenant.id, 'webhook', 'primary'))).statusCode).toBe(201);
    expect((await t.admin('POST', '/v1/admin/providers', consoleProvider('*', 'sms', 'primary-shared'))).statusCode).toBe(201);
    expectError(await t.admin('POST', '/v1/admin/providers', consoleProvider('*', 'sms', 'primary-shared')), 409, 'CONFLICT');

    const second = (await t.admin('POST', '/v1/admin/providers', consoleProvider(tenant.id, 'sms', 'backup'))).json();
    expectError(await t.admin('PATCH', `/v1/admin/providers/${second.id}`, { name: 'primary' }), 409, 'CONFLICT');
    // Its own name again is no conflict.
    expect((await t.admin('PATCH', `/v1/admin/providers/${second.id}`, { name: 'backup', priority: 7 })).statusCode).toBe(200);
  });

  it("a Feishu bot stored with its hook URL in config (before it was a secret) is listed without the bot's token", async () => {
    const tenant = await t.createTenant();
    await t.runtime.repositories.providers.create({
      scope: tenant.id,
      channel: 'webhook',
      kind: 'feishu',
      name: 'old-bot',
      qps: 5,
      config: { webhookUrl: 'https://open.feishu.cn/open-apis/bot/v2/hook/t0ken-abc' },
    });
    const listed = await t.admin('GET', `/v1/admin/providers?scope=${tenant.id}`);
    expect(listed.body).not.toContain('t0ken-abc');
    expect(listed.json().providers[0].config.webhookUrl).toContain('move it to secret.webhookUrl');
  });

  it('changes priority, QPS and secret, disables and removes', async () => {
    const created = (await t.admin('POST', '/v1/admin/providers', smtp('*', { name: 'shared' }))).json();
    const patched = await t.admin('PATCH', `/v1/admin/providers/${created.id}`, {
      priority: 5,
      qps: 50,
      enabled: false,
      secret: { user: 'u', password: 'rotated' },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ priority: 5, qps: 50, enabled: false, hasSecret: true });
    expect(await t.runtime.repositories.providers.revealSecret(created.id)).toContain('rotated');
    expectError(await t.admin('PATCH', `/v1/admin/providers/${created.id}`, { config: { host: '' } }), 400, 'INVALID_REQUEST');
    // The stored password would go to the new host: pointing it elsewhere takes the secret again.
    const elsewhere = { host: 'smtp.elsewhere.example', port: 587, from: 'a@example.com' };
    const moved = expectError(await t.admin('PATCH', `/v1/admin/providers/${created.id}`, { config: elsewhere }), 400, 'INVALID_REQUEST');
    expect(String(moved.message)).toContain('takes its secret again');
    const withSecret = await t.admin('PATCH', `/v1/admin/providers/${created.id}`, {
      config: elsewhere,
      secret: { user: 'u', password: 'p2' },
    });
    expect(withSecret.json()).toMatchObject({ config: elsewhere });
    // So does sending it in clear: the TLS settings route the credentials too.
    const inClear = { ...elsewhere, requireTLS: false };
    expectError(await t.admin('PATCH', `/v1/admin/providers/${created.id}`, { config: inClear }), 400, 'INVALID_REQUEST');
    expect((await t.admin('DELETE', `/v1/admin/providers/${created.id}`)).statusCode).toBe(200);
    expectError(await t.admin('DELETE', `/v1/admin/providers/${created.id}`), 404, 'NOT_FOUND');
    expectError(await t.admin('PATCH', '/v1/admin/providers/nope', { qps: 1 }), 404, 'NOT_FOUND');
  });

  it('a secret sealed with another key: a config change asks for a new secret (400, not 500), and one with it applies', async () => {
    const created = (await t.admin('POST', '/v1/admin/providers', smtp('*', { name: 'other-key' }))).json();
    // As if sealed by a CLI that made its own key file elsewhere: this process's key cannot open it.
    const foreign = new SecretBox(Buffer.alloc(32, 9)).seal(JSON.stringify({ user: 'u', password: 'p' }), created.id);
    await t.runtime.database.db.updateTable('providers').set({ secret: foreign }).where('id', '=', created.id).execute();
    const refused = expectError(
      await t.admin('PATCH', `/v1/admin/providers/${created.id}`, { config: { host: '127.0.0.2', from: 'a@example.com' } }),
      400,
      'INVALID_REQUEST',
    );
    expect(String(refused.message)).toContain("cannot be opened with this process's secret key");
    const fixed = await t.admin('PATCH', `/v1/admin/providers/${created.id}`, {
      config: { host: '127.0.0.2', from: 'a@example.com' },
      secret: { user: 'u', password: 'new' },
    });
    expect(fixed.statusCode, fixed.body).toBe(200);
  });
});

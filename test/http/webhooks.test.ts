/** The webhook admin API: the secret shown once, URL checks, events defaults, tenants kept apart. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/core/lifecycle.js';
import { startApp, type TestApp } from './support.js';

describe('webhook admin API', () => {
  let t: TestApp;
  let strict: TestApp;

  beforeAll(async () => {
    t = await startApp({ SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true' });
    strict = await startApp({ SLUICE_WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com,*.example.org' });
  });
  afterAll(async () => {
    await t?.close();
    await strict?.close();
  });

  it('creates with the secret once, lists and reads without it, defaults to every event but accepted', async () => {
    const { id } = await t.createTenant();
    const created = await t.admin('POST', `/v1/admin/tenants/${id}/webhooks`, { url: 'http://127.0.0.1:8080/hook', description: 'ops' });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ url: 'http://127.0.0.1:8080/hook', description: 'ops', enabled: true, tenantId: id });
    expect(body.events).toEqual(EVENT_TYPES.filter((type) => type !== 'message.accepted'));
    expect(body.events).toContain('message.undelivered');
    expect(body.secret).toMatch(/^whsec_/);
    const list = await t.admin('GET', `/v1/admin/tenants/${id}/webhooks`);
    expect(list.json().webhooks).toHaveLength(1);
    expect(list.body).not.toContain(body.secret);
    const read = await t.admin('GET', `/v1/admin/tenants/${id}/webhooks/${body.id}`);
    expect(read.json().secret).toBeUndefined();
    const patched = await t.admin('PATCH', `/v1/admin/tenants/${id}/webhooks/${body.id}`, { events: ['message.accepted'], enabled: false });
    expect(patched.json()).toMatchObject({ events: ['message.accepted'], enabled: false });
    const rotated = await t.admin('POST', `/v1/admin/tenants/${id}/webhooks/${body.id}/rotate-secret`);
    expect(rotated.json().secret).not.toBe(body.secret);
    expect(rotated.json().previousSecretUntil).not.toBeNull();
  });

  it("refuses other schemes, credentials (never echoed), and unknown events; another tenant's webhook is 404", async () => {
    const { id } = await t.createTenant();
    const other = await t.createTenant();
    for (const url of ['ftp://127.0.0.1/x', 'http://user:hunter2@127.0.0.1/x', 'not a url']) {
      const response = await t.admin('POST', `/v1/admin/tenants/${id}/webhooks`, { url });
      expect(response.statusCode, url).toBe(400);
      expect(response.body).not.toContain('hunter2');
    }
    expect(
      (await t.admin('POST', `/v1/admin/tenants/${id}/webhooks`, { url: 'http://127.0.0.1/x', events: ['message.read'] })).statusCode,
    ).toBe(400);
    const hook = (await t.admin('POST', `/v1/admin/tenants/${id}/webhooks`, { url: 'http://127.0.0.1/x?token=abc' })).json();
    expect(hook.url).toBe('http://127.0.0.1/x?token=***');
    const foreign = `/v1/admin/tenants/${other.id}/webhooks/${hook.id}`;
    expect((await t.admin('GET', foreign)).statusCode).toBe(404);
    expect((await t.admin('PATCH', foreign, { enabled: false })).statusCode).toBe(404);
    expect((await t.admin('POST', `${foreign}/rotate-secret`)).statusCode).toBe(404);
    expect((await t.admin('DELETE', foreign)).statusCode).toBe(404);
    expect((await t.admin('GET', `/v1/admin/tenants/${id}/webhooks/${hook.id}`)).statusCode).toBe(200);
  });

  it('refuses loopback and private targets and hosts off the allow-list unless allowed', async () => {
    const { id } = await strict.createTenant();
    for (const url of ['http://127.0.0.1/x', 'http://10.1.2.3/x', 'http://[::1]/x', 'http://localhost/x', 'https://evil.example.net/x']) {
      const response = await strict.admin('POST', `/v1/admin/tenants/${id}/webhooks`, { url });
      expect(response.statusCode, url).toBe(400);
    }
    const alsoPrivate = await strict.admin('POST', `/v1/admin/tenants/${id}/webhooks`, { url: 'http://192.168.1.1/x' });
    expect(alsoPrivate.json().error.message).toMatch(/allow-list|ALLOWED_HOSTS|private/);
  });
});

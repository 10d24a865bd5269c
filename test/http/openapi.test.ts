/**
 * /docs/json must describe the server as it answers: who may call each operation (`security`), and
 * every status each route answers. A scenario drives every route through its outcomes; the status
 * of each response, as the route answered it, must be one its operation lists, and each success
 * status the document lists must have been answered.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/api/operations.js';
import { buildHttpApp } from '../../src/http/app.js';
import { ADMIN_TOKEN, phone, sms, startApp, type TestApp } from './support.js';

interface Operation {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}
type Document = { security?: unknown; paths: Record<string, Record<string, Operation>> };

let t: TestApp;
let app: FastifyInstance;
let document: Document;
/** `METHOD /path/{param}` → statuses the routes answered. */
const answered = new Map<string, Set<number>>();

beforeAll(async () => {
  t = await startApp({ SLUICE_BODY_LIMIT_BYTES: '4096', SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true' });
  const metrics = t.runtime.http.metrics!;
  // The same services, recording each response as the route (not the URL) answered it.
  app = await buildHttpApp({
    ...t.runtime.http,
    metrics: {
      contentType: metrics.contentType,
      render: () => metrics.render(),
      observeHttp: (route, method, status) => {
        const key = `${method} ${route.replace(/:(\w+)/g, '{$1}')}`;
        answered.set(key, (answered.get(key) ?? new Set()).add(status));
      },
    },
  });
  document = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, operation })),
  );

/** A URL for a documented path: each `{param}` replaced. */
const urlOf = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'channel' ? 'sms' : `x-${name}`));

describe('the document', () => {
  it('is valid OpenAPI for swagger-parser and for redocly lint (no errors, no warnings)', async () => {
    await SwaggerParser.validate(structuredClone(document) as never);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const redocly = new URL('../../node_modules/.bin/redocly', import.meta.url).pathname;
      const { stdout, stderr } = await promisify(execFile)(redocly, ['lint', file, '--format=summary'], { timeout: 60_000 });
      // The summary lists one `error <rule>: n` or `warning <rule>: n` line per rule broken.
      expect(stdout + stderr).toMatch(/Your API description is valid/);
      expect(stdout + stderr).not.toMatch(/^(error|warning)\s+[\w-]+: \d+/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('names every operation once (operationId), tags it, and the table names no route that is gone', () => {
    const ids = operations().map(({ key, operation }) => {
      expect(operation.operationId, key).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.tags?.length, key).toBe(1);
      return operation.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
    const documented = new Set(operations().map(({ key }) => key.replace(/\{(\w+)\}/g, ':$1')));
    expect(Object.keys(OPERATIONS).filter((key) => !documented.has(key))).toEqual([]);
  });

  it('has servers, a license, and examples on the main request bodies', () => {
    const raw = document as unknown as { servers?: unknown[]; info: { license?: unknown } };
    expect(raw.servers?.length).toBeGreaterThan(0);
    expect(raw.info.license).toBeDefined();
    for (const [path, method] of [
      ['/v1/messages', 'post'],
      ['/v1/frequency/check', 'post'],
      ['/v1/admin/tenants', 'post'],
      ['/v1/admin/tenants/{id}/rules/{channel}', 'put'],
      ['/v1/admin/providers', 'post'],
      ['/v1/admin/tenants/{id}/rules/{channel}/preview', 'post'],
    ] as const) {
      // @fastify/swagger moves a body schema's `examples` to its media type's `example`.
      const body = (document.paths[path]![method] as unknown as { requestBody: { content: Record<string, { example?: unknown }> } })
        .requestBody;
      expect(body.content['application/json']!.example, `${method} ${path}`).toBeDefined();
    }
  });
});

describe('the batch body', () => {
  it('shows what each message must be, though the route validates the messages one by one', () => {
    const body = (
      document.paths['/v1/messages/batch']!.post as unknown as { requestBody: { content: Record<string, { schema: unknown }> } }
    ).requestBody.content['application/json']!.schema as { anyOf: { properties: Record<string, { items: { properties?: object } }> }[] };
    const [messages, campaign] = body.anyOf;
    expect(Object.keys(messages!.properties.messages!.items.properties ?? {})).toEqual(expect.arrayContaining(['channel', 'to', 'body']));
    expect(Object.keys(campaign!.properties.recipients!.items.properties ?? {})).toEqual(['to', 'params']);
  });
});

describe('security', () => {
  it('no global security: each operation says who may call it, and the server agrees', async () => {
    expect(document.security).toBeUndefined();
    for (const { key, path, method, operation } of operations()) {
      expect(operation.security, key).toBeDefined();
      const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      const expected = path.startsWith('/v1/admin')
        ? ['adminToken']
        : path.startsWith('/v1/receipts')
          ? ['receiptToken']
          : path.startsWith('/v1/')
            ? ['apiKey']
            : [];
      expect(schemes, key).toEqual(expected);
      // Without credentials: 401 where the document asks for them, an answer otherwise.
      const response = await app.inject({ method: method.toUpperCase() as InjectOptions['method'], url: urlOf(path) });
      if (expected.length > 0) expect(response.statusCode, key).toBe(401);
      else expect([200, 503], key).toContain(response.statusCode);
    }
    expect(operations().map(({ key }) => key)).toEqual(expect.arrayContaining(['GET /healthz', 'GET /readyz', 'GET /metrics']));
  });

  it('429 lists Retry-After; Idempotency-Key lists its constraints', () => {
    const send = document.paths['/v1/messages']!.post!;
    expect(send.responses['429']).toMatchObject({ headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 } } } });
    const parameters = (send as unknown as { parameters: { in: string; name: string; schema: Record<string, unknown> }[] }).parameters;
    expect(parameters.find((parameter) => parameter.in === 'header' && parameter.name === 'idempotency-key')?.schema).toMatchObject({
      minLength: 1,
      maxLength: 128,
      pattern: expect.any(String),
    });
  });
});

describe('statuses', () => {
  it('every route answers only statuses its operation lists, and every success status listed is answered', async () => {
    const admin = (method: InjectOptions['method'], url: string, payload?: unknown, headers: Record<string, string> = {}) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const tenantCall = (
      key: string,
      method: InjectOptions['method'],
      url: string,
      payload?: unknown,
      headers: Record<string, string> = {},
    ) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, ...headers },
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const raw = (key: string, url: string, payload: string, contentType: string) =>
      app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, payload });
    const big = 'x'.repeat(5000);

    // Tenants.
    const created = await admin('POST', '/v1/admin/tenants', { name: 'documented' });
    const { id, apiKey } = created.json() as { id: string; apiKey: string };
    await admin('POST', '/v1/admin/tenants', { name: 'documented' });

    // Suppressions.
    for (const base of ['/v1/suppressions/sms/%2B8613800138009', `/v1/admin/tenants/${id}/suppressions/sms/%2B8613800138009`]) {
      const call = base.startsWith('/v1/admin')
        ? admin
        : (method: InjectOptions['method'], url: string, body?: unknown) => tenantCall(apiKey, method, url, body);
      await call('PUT', base, { category: 'news' });
      await call('PUT', base, { category: '**' });
      await call('GET', base);
      await call('DELETE', `${base}?category=news`);
      await call('GET', base.replace('%2B8613800138009', 'nonsense'));
    }
    await tenantCall(apiKey, 'GET', '/v1/suppressions?limit=5');
    await tenantCall(apiKey, 'GET', '/v1/suppressions?limit=0');
    await tenantCall('wrong', 'GET', '/v1/suppressions');
    await tenantCall(apiKey, 'GET', '/v1/recipients/sms/%2B8613800138009/consent');
    await tenantCall(apiKey, 'GET', '/v1/recipients/sms/%2B8613800138009/consent?after=%25');
    await admin('GET', `/v1/admin/tenants/${id}/suppressions`);
    await admin('GET', '/v1/admin/tenants/unknown/suppressions');
    await admin('GET', `/v1/admin/tenants/${id}/recipients/sms/%2B8613800138009/consent`);
    await admin('POST', '/v1/admin/tenants', { name: '' });
    await admin('POST', '/v1/admin/tenants', { name: big });
    await raw(ADMIN_TOKEN, '/v1/admin/tenants', '<tenant/>', 'application/xml');
    await admin('GET', '/v1/admin/tenants');
    await admin('GET', `/v1/admin/tenants/${id}`);
    await admin('GET', '/v1/admin/tenants/unknown');
    await admin('GET', `/v1/admin/tenants/${'x'.repeat(65)}`);
    await admin('PATCH', `/v1/admin/tenants/${id}`, { qpsLimit: 1000 });
    await admin('PATCH', `/v1/admin/tenants/${id}`, { qpsLimit: 0 });
    await admin('PATCH', '/v1/admin/tenants/unknown', { status: 'active' });
    await admin('GET', `/v1/admin/tenants/${id}/backlog`);
    await admin('GET', '/v1/admin/tenants/unknown/backlog');

    // API keys (the tenant's first key stays: the calls below use it).
    await admin('GET', `/v1/admin/tenants/${id}/keys`);
    await admin('GET', '/v1/admin/tenants/unknown/keys');
    const rollover = (await admin('POST', `/v1/admin/tenants/${id}/keys?keepOthers=true`)).json().keyId as string;
    await admin('POST', `/v1/admin/tenants/${id}/keys?keepOthers=maybe`);
    await admin('POST', '/v1/admin/tenants/unknown/keys');
    await admin('DELETE', `/v1/admin/tenants/${id}/keys/${rollover}`);
    await admin('DELETE', `/v1/admin/tenants/${id}/keys/${rollover}`);

    // Rules.
    await admin('PUT', `/v1/admin/tenants/${id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1 }] });
    await admin('PUT', `/v1/admin/tenants/${id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 0 }] });
    await admin('PUT', '/v1/admin/tenants/unknown/rules/sms', { rules: [] });
    await admin('GET', `/v1/admin/tenants/${id}/rules/sms`);
    await admin('GET', `/v1/admin/tenants/${id}/rules/fax`);
    await admin('GET', '/v1/admin/tenants/unknown/rules/sms');

    // Blacklists.
    for (const url of [`/v1/admin/tenants/${id}/blacklist`, '/v1/admin/blacklist']) {
      await admin('POST', url, { channel: 'sms', recipients: [phone(1)] });
      await admin('POST', url, { recipients: [] });
      await admin('GET', url);
      await admin('GET', `${url}?limit=0`);
      await admin('DELETE', url, { channel: 'sms', recipients: [phone(1)] });
      await admin('DELETE', url, { recipients: [] });
    }
    await admin('GET', '/v1/admin/tenants/unknown/blacklist');
    await admin('POST', `/v1/admin/tenants/${id}/blacklist`, { channel: 'sms', recipients: [phone(9)] });

    // Bans.
    await admin('DELETE', `/v1/admin/tenants/${id}/bans/sms/${encodeURIComponent(phone(2))}`);
    await admin('DELETE', `/v1/admin/tenants/${id}/bans/sms/not-a-phone`);
    await admin('DELETE', `/v1/admin/tenants/unknown/bans/sms/${encodeURIComponent(phone(2))}`);

    // Providers.
    const provider = { scope: id, channel: 'sms', kind: 'console', name: 'console-1', qps: 10 };
    const providerId = (await admin('POST', '/v1/admin/providers', provider)).json().id as string;
    await admin('POST', '/v1/admin/providers', provider);
    await admin('POST', '/v1/admin/providers', { ...provider, qps: 0 });
    await admin('POST', '/v1/admin/providers', { ...provider, scope: 'unknown' });
    await admin('GET', '/v1/admin/providers');
    await admin('GET', '/v1/admin/providers?channel=fax');
    const second = (await admin('POST', '/v1/admin/providers', { ...provider, name: 'console-2' })).json().id as string;
    await admin('PATCH', `/v1/admin/providers/${providerId}`, { priority: 1 });
    await admin('PATCH', `/v1/admin/providers/${second}`, { name: 'console-1' });
    await admin('PATCH', '/v1/admin/providers/unknown', { priority: 1 });
    await admin('DELETE', `/v1/admin/providers/${second}`);
    await admin('DELETE', '/v1/admin/providers/unknown');

    // Templates and quiet hours.
    const otp = { params: { code: { type: 'string', pattern: '^\\d{4,8}$' } }, body: 'Your code is {{code}}' };
    await admin('PUT', `/v1/admin/tenants/${id}/templates/sms/otp`, otp);
    await admin('PUT', `/v1/admin/tenants/${id}/templates/sms/otp`, { ...otp, body: 'Hi {{who}}' });
    await admin('PUT', `/v1/admin/tenants/unknown/templates/sms/otp`, otp);
    await admin('GET', `/v1/admin/tenants/${id}/templates/sms/otp`);
    await admin('GET', `/v1/admin/tenants/${id}/templates/sms/none`);
    await admin('GET', `/v1/admin/tenants/${id}/templates?channel=sms`);
    await admin('GET', `/v1/admin/tenants/${id}/templates?channel=fax`);
    await admin('PUT', `/v1/admin/tenants/${id}/templates/email/gone`, { params: {}, subject: 's', body: 'b' });
    await admin('DELETE', `/v1/admin/tenants/${id}/templates/email/gone`);
    await admin('DELETE', `/v1/admin/tenants/${id}/templates/email/gone`);
    const quiet = { timeZone: 'Asia/Shanghai', windows: [{ from: '21:00', to: '08:00' }], applies: 'bulk' };
    await admin('PUT', `/v1/admin/tenants/${id}/quiet-hours/email`, quiet);
    await admin('PUT', `/v1/admin/tenants/${id}/quiet-hours/email`, { ...quiet, timeZone: 'Mars/Olympus' });
    await admin('GET', `/v1/admin/tenants/${id}/quiet-hours/email`);
    await admin('GET', `/v1/admin/tenants/${id}/quiet-hours/sms`);
    await admin('DELETE', `/v1/admin/tenants/${id}/quiet-hours/email`);
    await admin('DELETE', `/v1/admin/tenants/${id}/quiet-hours/email`);
    await tenantCall(apiKey, 'POST', '/v1/messages/batch', { messages: [sms(phone(8)), sms('12345')] });
    await tenantCall(apiKey, 'POST', '/v1/messages/batch', { messages: [] });
    await tenantCall('sk_unknown', 'POST', '/v1/messages/batch', { messages: [sms(phone(8))] });
    await raw(apiKey, '/v1/messages/batch', 'messages=1', 'text/plain');
    // Webhooks.
    const hooks = `/v1/admin/tenants/${id}/webhooks`;
    const webhookId = (await admin('POST', hooks, { url: 'http://127.0.0.1:9/hook', events: ['message.accepted'] })).json().id as string;
    await admin('POST', hooks, { url: 'ftp://127.0.0.1/hook' });
    await admin('POST', '/v1/admin/tenants/unknown/webhooks', { url: 'http://127.0.0.1:9/hook' });
    await admin('GET', hooks);
    await admin('GET', '/v1/admin/tenants/unknown/webhooks');
    await admin('GET', `${hooks}/${webhookId}`);
    await admin('GET', `${hooks}/unknown`);
    await admin('PATCH', `${hooks}/${webhookId}`, { description: 'ops' });
    await admin('PATCH', `${hooks}/${webhookId}`, {});
    await admin('PATCH', `${hooks}/unknown`, { enabled: false });
    await admin('POST', `${hooks}/${webhookId}/rotate-secret`);
    await admin('POST', `${hooks}/unknown/rotate-secret`);
    await admin('GET', `${hooks}/${webhookId}/events?status=pending&limit=10`);
    await admin('GET', `${hooks}/unknown/events`);
    await admin('POST', `${hooks}/${webhookId}/events/unknown/replay`);
    const doomed = (await admin('POST', hooks, { url: 'http://127.0.0.1:9/other' })).json().id as string;
    await admin('DELETE', `${hooks}/${doomed}`);
    await admin('DELETE', `${hooks}/${doomed}`);

    // Receipts.
    const aliyun = await t.runtime.repositories.providers.create({
      scope: id,
      channel: 'sms',
      kind: 'aliyun-sms',
      name: 'a',
      qps: 1,
      config: {},
    });
    const receiptPath = (await admin('POST', `/v1/admin/providers/${aliyun.id}/receipt-token`)).json().path as string;
    await admin('POST', `/v1/admin/providers/${providerId}/receipt-token`);
    await admin('POST', '/v1/admin/providers/unknown/receipt-token');
    const report = [{ biz_id: 'b-1', success: true, err_code: 'DELIVERED', report_time: '2026-12-01 10:00:00' }];
    await app.inject({ method: 'POST', url: receiptPath, payload: report });
    await app.inject({ method: 'POST', url: receiptPath, payload: { biz_id: 'b-1' } });
    await app.inject({ method: 'POST', url: `/v1/receipts/${aliyun.id}?token=wrong`, payload: report });

    // Messages.
    const accepted = (await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(3)), { 'idempotency-key': 'k-1' })).json().id as string;
    await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(3)), { 'idempotency-key': 'k-1' });
    await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(4)), { 'idempotency-key': 'k-1' });
    await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(3)));
    await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(9)));
    await tenantCall(apiKey, 'POST', '/v1/messages', sms('12345'));
    await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(5), { body: big }));
    await raw(apiKey, '/v1/messages', 'channel=sms', 'application/x-www-form-urlencoded');
    await tenantCall('sk_unknown', 'POST', '/v1/messages', sms(phone(5)));
    const scheduled = (await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(6), { sendAt: t.clock.now() + 3_600_000 }))).json()
      .id as string;
    await tenantCall(apiKey, 'GET', '/v1/messages?limit=2');
    await tenantCall(apiKey, 'GET', '/v1/messages?limit=0');
    await tenantCall(apiKey, 'GET', '/v1/messages');
    await tenantCall(apiKey, 'GET', `/v1/messages/${accepted}`);
    await tenantCall(apiKey, 'GET', '/v1/messages/unknown');
    await tenantCall(apiKey, 'GET', `/v1/messages/${'x'.repeat(65)}`);
    await tenantCall(apiKey, 'DELETE', `/v1/messages/${scheduled}`);
    await tenantCall(apiKey, 'DELETE', '/v1/messages/unknown');
    await tenantCall(apiKey, 'DELETE', `/v1/messages/${'x'.repeat(65)}`);
    await t.runtime.repositories.messages.drain();
    const claimed = await t.runtime.repositories.messages.claim(accepted, { now: t.clock.now(), leaseMs: 5000 });
    await tenantCall(apiKey, 'DELETE', `/v1/messages/${accepted}`);
    const [event] = (await admin('GET', `${hooks}/${webhookId}/events?status=pending`)).json().events as { id: string }[];
    await admin('POST', `${hooks}/${webhookId}/events/${event!.id}/replay`);

    // SMS pumping protection.
    await tenantCall(apiKey, 'POST', `/v1/messages/${accepted}/feedback`, { outcome: 'confirmed' });
    await t.runtime.repositories.messages.markSent(accepted, { attempt: claimed!.attempts, now: t.clock.now() });
    await tenantCall(apiKey, 'POST', `/v1/messages/${accepted}/feedback`, { outcome: 'confirmed' });
    await tenantCall(apiKey, 'POST', '/v1/messages/unknown/feedback', { outcome: 'confirmed' });
    await tenantCall(apiKey, 'POST', `/v1/messages/${accepted}/feedback`, { outcome: 'nope' });
    await admin('PUT', '/v1/admin/prices/sms', { currency: 'USD', default: 0.05, countries: { GB: 0.04 } });
    await admin('PUT', '/v1/admin/prices/sms', { currency: 'USD', default: -1 });
    await admin('GET', '/v1/admin/prices/sms');
    await admin('PUT', `/v1/admin/tenants/${id}/fraud/sms`, { mode: 'monitor', monthlySpend: { limit: 100, currency: 'USD' } });
    await admin('PUT', `/v1/admin/tenants/${id}/fraud/sms`, { countries: { allow: ['ZZ'] } });
    await admin('PUT', '/v1/admin/prices/sms', { currency: 'EUR', default: 0.05 });
    await admin('GET', `/v1/admin/tenants/${id}/fraud/sms`);
    await admin('GET', '/v1/admin/tenants/unknown/fraud/sms');
    await admin('GET', `/v1/admin/tenants/${id}/fraud/sms/status`);

    // Admin lookups.
    await admin('GET', `/v1/admin/tenants/${id}/messages?to=${encodeURIComponent(phone(3))}&limit=1`);
    await admin('GET', `/v1/admin/tenants/${id}/messages?to=${encodeURIComponent(phone(3))}&limit=1000`);
    await admin('GET', `/v1/admin/tenants/unknown/messages?to=${encodeURIComponent(phone(3))}`);
    await admin('GET', `/v1/admin/tenants/${id}/messages/${accepted}`);
    await admin('GET', `/v1/admin/tenants/${id}/messages/unknown`);
    await admin('GET', `/v1/admin/tenants/${id}/messages/${'x'.repeat(65)}`);
    await admin('GET', `/v1/admin/tenants/${id}/bans/sms/${encodeURIComponent(phone(3))}`);
    await admin('GET', `/v1/admin/tenants/${id}/bans/sms/not-a-phone`);
    await admin('GET', `/v1/admin/tenants/unknown/bans/sms/${encodeURIComponent(phone(3))}`);
    await admin('POST', `/v1/admin/tenants/${id}/rules/sms/preview`, { sends: [{ atMs: 0 }, { atMs: 1 }] });
    await admin('POST', `/v1/admin/tenants/${id}/rules/sms/preview`, { sends: [{ atMs: 1 }, { atMs: 0 }] });
    await admin('POST', '/v1/admin/tenants/unknown/rules/sms/preview', { sends: [{ atMs: 0 }] });
    await admin('POST', `/v1/admin/tenants/${id}/rules/sms/preview`, {
      sends: [{ atMs: 0 }],
      rules: [{ windowSeconds: 1, limit: 1, x: big }],
    });
    await raw(ADMIN_TOKEN, `/v1/admin/tenants/${id}/rules/sms/preview`, 'sends=1', 'text/plain');

    // Risk control.
    const check = { subject: 'user-1', action: 'login', rules: [{ windowSeconds: 60, limit: 1 }] };
    await tenantCall(apiKey, 'POST', '/v1/frequency/check', check);
    await tenantCall(apiKey, 'POST', '/v1/frequency/check', check);
    await tenantCall(apiKey, 'POST', '/v1/frequency/check', { ...check, rules: [] });
    await tenantCall(apiKey, 'POST', '/v1/frequency/check', { ...check, subject: big });
    await raw(apiKey, '/v1/frequency/check', 'subject=x', 'text/plain');
    const riskRules = [
      { name: 'per-user', kind: 'window', key: ['user'], windowSeconds: 60, limit: 1 },
      { name: 'fails', kind: 'last-n', key: ['user'], n: 5, m: 3, outcome: 'failed' },
    ];
    await admin('PUT', `/v1/admin/tenants/${id}/risk/login`, { rules: riskRules });
    await admin('PUT', `/v1/admin/tenants/${id}/risk/login`, { rules: [{ ...riskRules[0], kind: 'nope' }] });
    await admin('PUT', `/v1/admin/tenants/unknown/risk/login`, { rules: riskRules });
    await admin('GET', `/v1/admin/tenants/${id}/risk/login`);
    await admin('GET', `/v1/admin/tenants/${id}/risk/signup`);
    await tenantCall(apiKey, 'POST', '/v1/risk/check', { action: 'login', dimensions: { user: 'u1' } });
    await tenantCall(apiKey, 'POST', '/v1/risk/check', { action: 'login', dimensions: {} });
    await tenantCall(apiKey, 'POST', '/v1/risk/check', { action: 'signup', dimensions: { user: 'u1' } });
    await tenantCall(apiKey, 'POST', '/v1/risk/events', { action: 'login', dimensions: { user: 'u1' }, outcome: 'failed' });
    await tenantCall(apiKey, 'POST', '/v1/risk/events', { action: 'signup', dimensions: { user: 'u1' }, outcome: 'failed' });
    await raw(apiKey, '/v1/risk/check', 'action=x', 'text/plain');
    await admin('PATCH', `/v1/admin/tenants/${id}`, { status: 'suspended' });
    await tenantCall(apiKey, 'POST', '/v1/risk/check', { action: 'login', dimensions: { user: 'u1' } });
    await tenantCall(apiKey, 'POST', '/v1/frequency/check', check);
    await tenantCall(apiKey, 'POST', '/v1/messages', sms(phone(7)));

    // Health.
    await app.inject({ method: 'GET', url: '/healthz' });
    await app.inject({ method: 'GET', url: '/readyz' });
    await app.inject({ method: 'GET', url: '/metrics' });

    const problems: string[] = [];
    for (const { key, operation } of operations()) {
      const listed = Object.keys(operation.responses).map(Number);
      const seen = answered.get(key);
      if (!seen) {
        problems.push(`${key}: not exercised by this test`);
        continue;
      }
      for (const status of seen) if (!listed.includes(status)) problems.push(`${key}: answered ${status}, not documented`);
      for (const status of listed) if (status < 300 && !seen.has(status)) problems.push(`${key}: documents ${status}, never answered`);
    }
    for (const key of answered.keys()) {
      if (!operations().some((operation) => operation.key === key) && !key.startsWith('GET /docs')) problems.push(`${key}: not documented`);
    }
    expect(problems).toEqual([]);
    // The 201s, explicitly.
    expect(Object.keys(document.paths['/v1/admin/tenants']!.post!.responses)).toContain('201');
    expect(Object.keys(document.paths['/v1/admin/tenants']!.post!.responses)).not.toContain('200');
    expect(Object.keys(document.paths['/v1/admin/providers']!.post!.responses)).toContain('201');
    expect(Object.keys(document.paths['/v1/admin/providers']!.post!.responses)).not.toContain('200');
  });
});

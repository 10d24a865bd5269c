/**
 * Fuzzing the HTTP API on every database (SQLite always; PostgreSQL and MySQL/MariaDB when their
 * servers are configured): over 10,000 random and mutated requests on SQLite, over 4,000 on each
 * server (seeded fast-check samples, so a failure replays), against one real app each. Whatever
 * comes in — random JSON, valid bodies with one field removed, retyped or blown up, deep nesting,
 * random bytes, wrong content types, random headers, path and query parameters — the answer is
 * never a 5xx, always the `{"error": {code, message}}` shape when it is an error, and the app
 * still answers /healthz afterwards. The databases differ in what text they take (PostgreSQL
 * refuses NUL), which is why every one is fuzzed. `fuzz-body-text.int.test.ts` puts NUL and other
 * control characters into every string of every JSON body the OpenAPI document describes.
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';
import { ADMIN_TOKEN, expectError, phone, startApp, type TestApp } from './support.js';

const SEED = 20_240_611;

interface FuzzRequest {
  kind: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

/** The real tenant's id and key, that most requests use, and `scale`: the share of the full run. */
interface Target {
  apiKey: string;
  tenantId: string;
  providerId: string;
  scale: number;
}

const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '__proto__', 'constructor', '+', '+86', '@', 'a@b', '💥'.repeat(10), 'NaN', '-1', '1e400'),
);
const anyJson = fc.jsonValue({ maxDepth: 4 });
const mutation: fc.Arbitrary<{ op: 'remove' } | { op: 'set'; value: unknown }> = fc.oneof(
  fc.constant({ op: 'remove' as const }),
  anyJson.map((value) => ({ op: 'set' as const, value })),
  anyText.map((value) => ({ op: 'set' as const, value })),
  fc.integer({ min: 1000, max: 70_000 }).map((length) => ({ op: 'set' as const, value: 'x'.repeat(length) })),
  fc.constantFrom(
    ...[null, true, 0, -1, 1.5, 2 ** 53, -(2 ** 53), 1e308, [], {}, [1, 2], { a: 'b' }, { __proto__: { polluted: 1 } }].map((value) => ({
      op: 'set' as const,
      value,
    })),
  ),
);

/** Valid bodies of each channel, the starting points of mutation. */
const validBody = fc.oneof(
  fc.integer({ min: 0, max: 99 }).map((n) => ({ channel: 'sms', to: phone(70_000 + n), body: 'code 1234' })),
  fc.integer({ min: 0, max: 99 }).map((n) => ({ channel: 'sms', to: phone(80_000 + n), vendorTemplate: 'SMS_1', params: { code: '42' } })),
  fc.constant({ channel: 'email', to: 'a@example.com', subject: 'hello', body: 'text', html: '<p>x</p>' }),
  fc.constant({ channel: 'webhook', to: 'ops-alerts', body: 'alert', sendAt: Date.now() + 3_600_000 }),
);
const SEND_FIELDS = ['channel', 'to', 'template', 'vendorTemplate', 'params', 'subject', 'body', 'html', 'sendAt', '__proto__', 'extra'];

const mutatedBody = fc.tuple(validBody, fc.constantFrom(...SEND_FIELDS), mutation).map(([body, field, change]) => {
  const copy: Record<string, unknown> = { ...body };
  if (change.op === 'remove') delete copy[field];
  else copy[field] = change.value;
  // JSON.stringify drops a __proto__ set through assignment; write it out so the parser sees it.
  return field === '__proto__' && change.op === 'set'
    ? `${JSON.stringify(copy).slice(0, -1)},"__proto__":${JSON.stringify(change.value) ?? 'null'}}`
    : JSON.stringify(copy);
});

const deepNesting = fc.tuple(fc.integer({ min: 100, max: 30_000 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) => {
  const close = open === '[' ? ']' : '}';
  return open.repeat(depth) + (open === '[' ? '1' : '1') + close.repeat(depth);
});

const randomBytes = fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes));
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'text/plain',
  'text/json',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/vnd.api+json',
  'application/json-patch+json',
  '',
  ';;;',
];

const headersFor = (key: string | undefined, extra: Record<string, string>, contentType = 'application/json') => ({
  ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
  ...(contentType ? { 'content-type': contentType } : {}),
  ...extra,
});

/** Header values inject can send (no CR/LF/NUL; anything else, even non-ASCII, goes as bytes). */
const headerValue = fc.string({ unit: 'binary', maxLength: 200 }).map((text) => text.replace(/[\r\n\0]/g, '').trim());

function buildRequests({ apiKey, tenantId, providerId, scale }: Target): FuzzRequest[] {
  const sample = <T>(arbitrary: fc.Arbitrary<T>, numRuns: number, offset: number): T[] =>
    fc.sample(arbitrary, { numRuns: Math.max(1, Math.round(numRuns * scale)), seed: SEED + offset });
  const requests: FuzzRequest[] = [];
  const send = (kind: string, payload: string | Buffer, contentType?: string, extra: Record<string, string> = {}) =>
    requests.push({ kind, method: 'POST', url: '/v1/messages', headers: headersFor(apiKey, extra, contentType), payload });

  for (const value of sample(anyJson, 2000, 1)) send('random json', JSON.stringify(value));
  for (const body of sample(mutatedBody, 2500, 2)) send('mutated body', body);
  for (const body of sample(deepNesting, 150, 3)) send('deep nesting', body);
  for (const bytes of sample(randomBytes, 700, 4)) send('random bytes', bytes);
  for (const text of sample(fc.string({ unit: 'binary', maxLength: 300 }), 600, 5)) send('random text', text);
  for (const [body, type] of sample(fc.tuple(validBody, fc.constantFrom(...CONTENT_TYPES)), 600, 6))
    send('content type', JSON.stringify(body), type);
  for (const [body, key] of sample(fc.tuple(validBody, headerValue), 500, 7))
    send('idempotency key', JSON.stringify(body), 'application/json', { 'idempotency-key': key });
  for (const [body, auth] of sample(fc.tuple(validBody, headerValue), 300, 8))
    requests.push({
      kind: 'authorization',
      method: 'POST',
      url: '/v1/messages',
      headers: { 'content-type': 'application/json', authorization: auth },
      payload: JSON.stringify(body),
    });
  for (const length of sample(fc.integer({ min: 60_000, max: 200_000 }), 30, 9))
    send('huge body', JSON.stringify({ channel: 'sms', to: phone(1), body: 'x'.repeat(length) }));

  const segment = fc.oneof(anyText, fc.string({ maxLength: 400 })).map((text) => encodeURIComponent(text));
  for (const [method, id] of sample(fc.tuple(fc.constantFrom('GET' as const, 'DELETE' as const), segment), 400, 10))
    requests.push({ kind: 'message id', method, url: `/v1/messages/${id}`, headers: headersFor(apiKey, {}, '') });

  const ruleLike = fc.oneof(
    fc.record({ windowSeconds: fc.integer(), limit: fc.integer(), banSeconds: fc.integer() }),
    fc.record({
      windowSeconds: fc.integer({ min: 1, max: 100_000 }),
      limit: fc.integer({ min: 1, max: 1000 }),
      algorithm: fc.constantFrom('sliding-log', 'sliding-counter', 'fixed-window', 'token-bucket', 'other'),
    }),
    anyJson,
  );
  const checkBody = fc.oneof(
    fc.record(
      { subject: anyText, action: anyText, rules: fc.array(ruleLike, { maxLength: 20 }), record: fc.boolean() },
      { requiredKeys: [] },
    ),
    anyJson,
  );
  for (const body of sample(checkBody, 700, 11))
    requests.push({
      kind: 'frequency check',
      method: 'POST',
      url: '/v1/frequency/check',
      headers: headersFor(apiKey, {}),
      payload: JSON.stringify(body),
    });

  // Admin routes with the admin token. Tenant ids are mostly the real one, so the bodies reach the services.
  const admin = (kind: string, method: FuzzRequest['method'], url: string, payload?: string) =>
    requests.push({
      kind,
      method,
      url,
      headers: headersFor(ADMIN_TOKEN, {}, payload === undefined ? '' : 'application/json'),
      ...(payload === undefined ? {} : { payload }),
    });
  const tenant = fc.oneof(fc.constant(tenantId), fc.constant(tenantId), segment);
  for (const body of sample(fc.oneof(fc.record({ name: anyText, qpsLimit: anyJson }, { requiredKeys: [] }), anyJson), 300, 12))
    admin('admin create', 'POST', '/v1/admin/tenants', JSON.stringify(body));
  const patch = fc.oneof(
    fc.record(
      {
        status: fc.oneof(fc.constantFrom('active', 'suspended'), anyText),
        qpsLimit: fc.oneof(fc.integer(), fc.constant(null), anyJson),
        dailyQuotas: fc.oneof(
          fc.record({ sms: fc.oneof(fc.integer(), fc.constant(null)), fax: fc.integer() }, { requiredKeys: [] }),
          anyJson,
        ),
      },
      { requiredKeys: [] },
    ),
    anyJson,
  );
  // A suspended or throttled tenant would still answer 4xx; the fuzz only looks for 5xx.
  for (const [id, body] of sample(fc.tuple(tenant, patch), 300, 13))
    admin('admin patch', 'PATCH', `/v1/admin/tenants/${id}`, JSON.stringify(body));
  const ruleSet = fc.oneof(
    fc.record(
      {
        rules: fc.array(ruleLike, { maxLength: 20 }),
        fallback: fc.oneof(anyJson, fc.record({ mode: anyText, rules: fc.array(ruleLike) })),
      },
      { requiredKeys: ['rules'] },
    ),
    anyJson,
  );
  for (const [id, channel, body] of sample(
    fc.tuple(tenant, fc.oneof(fc.constantFrom('sms', 'email', 'webhook'), segment), ruleSet),
    400,
    14,
  ))
    admin('admin rules', 'PUT', `/v1/admin/tenants/${id}/rules/${channel}`, JSON.stringify(body));
  const blacklist = fc.oneof(
    fc.record(
      { channel: fc.oneof(fc.constantFrom('sms', 'email', 'webhook', '*'), anyText), recipients: fc.array(anyText, { maxLength: 20 }) },
      { requiredKeys: [] },
    ),
    anyJson,
  );
  for (const [id, method, body] of sample(fc.tuple(tenant, fc.constantFrom('POST' as const, 'DELETE' as const), blacklist), 300, 15))
    admin('admin blacklist', method, `/v1/admin/tenants/${id}/blacklist`, JSON.stringify(body));
  for (const [method, body] of sample(fc.tuple(fc.constantFrom('POST' as const, 'DELETE' as const), blacklist), 150, 18))
    admin('admin global blacklist', method, '/v1/admin/blacklist', JSON.stringify(body));
  const listQuery = fc.record(
    { channel: fc.oneof(fc.constantFrom('sms', '*'), anyText), limit: fc.oneof(fc.integer(), anyText), after: anyText },
    { requiredKeys: [] },
  );
  for (const [id, query] of sample(fc.tuple(fc.option(tenant), listQuery), 150, 19)) {
    const search = new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)])).toString();
    admin('admin blacklist list', 'GET', `${id === null ? '/v1/admin/blacklist' : `/v1/admin/tenants/${id}/blacklist`}?${search}`);
  }
  for (const [id, channel, to] of sample(fc.tuple(tenant, fc.oneof(fc.constantFrom('sms', 'email', 'webhook'), segment), segment), 300, 16))
    admin('admin ban', 'DELETE', `/v1/admin/tenants/${id}/bans/${channel}/${to}`);
  for (const id of sample(tenant, 100, 17)) admin('admin get', 'GET', `/v1/admin/tenants/${id}`);
  for (const [id, method] of sample(fc.tuple(tenant, fc.constantFrom('GET' as const, 'POST' as const)), 100, 20))
    admin('admin keys', method, `/v1/admin/tenants/${id}/keys`);
  for (const [id, keyId] of sample(fc.tuple(tenant, segment), 100, 21))
    admin('admin key revoke', 'DELETE', `/v1/admin/tenants/${id}/keys/${keyId}`);
  for (const [id, channel] of sample(fc.tuple(tenant, fc.oneof(fc.constantFrom('sms', 'email', 'webhook'), segment)), 100, 22))
    admin('admin rules get', 'GET', `/v1/admin/tenants/${id}/rules/${channel}`);
  // Query strings: every key and value a random text (repeated keys too), on routes with and without a querystring schema.
  const query = fc
    .array(fc.tuple(fc.oneof(fc.constantFrom('scope', 'channel', 'limit', 'after', 'keepOthers', 'resetCounts'), anyText), anyText), {
      maxLength: 4,
    })
    .map((pairs) => new URLSearchParams(pairs).toString());
  const queried = fc.constantFrom(
    '/v1/admin/providers',
    '/v1/admin/tenants',
    `/v1/admin/tenants/${tenantId}`,
    `/v1/admin/tenants/${tenantId}/keys`,
    `/v1/admin/tenants/${tenantId}/blacklist`,
    '/v1/admin/blacklist',
  );
  for (const [url, search] of sample(fc.tuple(queried, query), 300, 23)) admin('admin query', 'GET', `${url}?${search}`);
  for (const search of sample(query, 100, 24))
    requests.push({ kind: 'message query', method: 'GET', url: `/v1/messages/x?${search}`, headers: headersFor(apiKey, {}, '') });
  const provider = fc.oneof(fc.constant(providerId), segment);
  const providerPatch = fc.oneof(
    fc.record({ name: anyText, priority: anyJson, qps: anyJson, enabled: anyJson, config: anyJson }, { requiredKeys: [] }),
    anyJson,
  );
  for (const [id, body] of sample(fc.tuple(provider, providerPatch), 150, 25))
    admin('admin provider patch', 'PATCH', `/v1/admin/providers/${id}`, JSON.stringify(body));
  for (const id of sample(segment, 50, 26)) admin('admin provider delete', 'DELETE', `/v1/admin/providers/${id}`);
  return requests;
}

/** Runs `requests` with a few in flight at a time (inject is in process; this only overlaps database commits). */
async function runAll(
  t: TestApp,
  requests: FuzzRequest[],
  inFlight: number,
): Promise<{ request: FuzzRequest; response: LightMyRequestResponse }[]> {
  const results: { request: FuzzRequest; response: LightMyRequestResponse }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const request = requests[next++]!;
      const response = await t.app.inject({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(request.payload === undefined ? {} : { payload: request.payload }),
      });
      results.push({ request, response });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return results;
}

/** Every path and query parameter of the API with NUL or another control character in it. */
const controlCharacterRequests = (tenantId: string, providerId: string): [FuzzRequest['method'], string, 'tenant' | 'admin'][] => [
  ['GET', '/v1/messages/%00', 'tenant'],
  ['DELETE', '/v1/messages/%00', 'tenant'],
  ['GET', '/v1/messages/ab%00cd', 'tenant'],
  ['GET', '/v1/messages/%1F', 'tenant'],
  ['GET', '/v1/admin/tenants/%00', 'admin'],
  ['PATCH', '/v1/admin/tenants/%00', 'admin'],
  ['GET', '/v1/admin/tenants/%00/keys', 'admin'],
  ['POST', '/v1/admin/tenants/%00/keys', 'admin'],
  ['DELETE', `/v1/admin/tenants/${tenantId}/keys/%00`, 'admin'],
  ['GET', '/v1/admin/tenants/%00/rules/sms', 'admin'],
  ['PUT', '/v1/admin/tenants/%00/rules/sms', 'admin'],
  ['DELETE', '/v1/admin/tenants/%00/bans/sms/%2B8613800138000', 'admin'],
  ['DELETE', `/v1/admin/tenants/${tenantId}/bans/webhook/a%00b`, 'admin'],
  ['GET', '/v1/admin/tenants/%00/blacklist', 'admin'],
  ['POST', '/v1/admin/tenants/%00/blacklist', 'admin'],
  ['PATCH', '/v1/admin/providers/%00', 'admin'],
  ['DELETE', '/v1/admin/providers/%00', 'admin'],
  ['DELETE', `/v1/admin/providers/${providerId}%00`, 'admin'],
  ['GET', '/v1/admin/providers?scope=%00', 'admin'],
  ['GET', '/v1/admin/providers?scope=a&scope=%00', 'admin'],
  ['GET', `/v1/admin/blacklist?after=%00`, 'admin'],
  ['GET', `/v1/admin/tenants/${tenantId}/blacklist?channel=sms&after=a%0Ab`, 'admin'],
  ['GET', '/v1/admin/tenants?after=%00', 'admin'],
  ['GET', '/v1/messages/x?foo=%00', 'tenant'],
];

/** The full run on SQLite (in process, fast); on a server, enough to meet each route and input many times. */
const SCALE: Record<string, number> = { sqlite: 1, postgres: 0.4, mysql: 0.4 };

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `fuzzing the HTTP API on ${backend.name}`, () => {
    let database: { url: string; drop(): Promise<void> };
    let t: TestApp;
    let target: Target;

    beforeAll(async () => {
      database = await backend.create();
      t = await startApp({ SLUICE_DB_URL: database.url });
      const { apiKey, id: tenantId } = await t.createTenant();
      // Rules and a quota so the consuming steps run (and are undone) under fuzzing too; few
      // recipients, so the rule and its ban are hit.
      await t.admin('PUT', `/v1/admin/tenants/${tenantId}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }] });
      await t.admin('PATCH', `/v1/admin/tenants/${tenantId}`, { dailyQuotas: { email: 50 } });
      const provider = await t.admin('POST', '/v1/admin/providers', {
        scope: tenantId,
        channel: 'webhook',
        kind: 'console',
        name: 'fuzzed',
        qps: 10,
      });
      expect(provider.statusCode, provider.body).toBe(201);
      target = { apiKey, tenantId, providerId: (provider.json() as { id: string }).id, scale: SCALE[backend.name] ?? 1 };
    });
    afterAll(async () => {
      await t?.close();
      await database?.drop();
    });

    it('NUL or another control character in any path or query parameter is 400 INVALID_REQUEST, not a database error', async () => {
      for (const [method, url, who] of controlCharacterRequests(target.tenantId, target.providerId)) {
        const response = await t.app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${who === 'admin' ? ADMIN_TOKEN : target.apiKey}` },
        });
        expect(`${method} ${url} -> ${response.statusCode} ${response.body}`).toMatch(/ -> 400 /);
        expectError(response, 400, 'INVALID_REQUEST');
      }
      // A cursor that decodes to text with NUL: refused as not a cursor.
      const forged = Buffer.from(JSON.stringify(['sms', 'a\u0000b'])).toString('base64url');
      expectError(await t.admin('GET', `/v1/admin/blacklist?after=${forged}`), 400, 'INVALID_REQUEST');
    });

    it('random and mutated requests: never a 5xx, errors always in the contract shape', async () => {
      const requests = buildRequests(target);
      expect(requests.length).toBeGreaterThanOrEqual(10_000 * target.scale);
      const results = await runAll(t, requests, 8);
      expect(results).toHaveLength(requests.length);

      const serverErrors: string[] = [];
      const badShapes: string[] = [];
      const statuses = new Map<number, number>();
      for (const { request, response } of results) {
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        const describe = () =>
          `${request.kind}: ${request.method} ${request.url.slice(0, 80)} ${JSON.stringify(request.headers).slice(0, 120)} ${String(request.payload).slice(0, 160)} -> ${response.statusCode} ${response.body.slice(0, 200)}`;
        if (response.statusCode >= 500) serverErrors.push(describe());
        if (response.statusCode >= 400) {
          let body: { error?: { code?: unknown; message?: unknown } } | undefined;
          try {
            body = response.json();
          } catch {
            body = undefined;
          }
          if (typeof body?.error?.code !== 'string' || typeof body.error.message !== 'string') badShapes.push(describe());
          if (response.statusCode === 429 && !response.headers['retry-after']) badShapes.push(`no Retry-After: ${describe()}`);
        }
      }
      expect(serverErrors.slice(0, 10), `${serverErrors.length} server errors`).toEqual([]);
      expect(badShapes.slice(0, 10), `${badShapes.length} error bodies off contract`).toEqual([]);
      // The fuzz reached the services, not only the schema: some sends were accepted, some limited.
      expect(statuses.get(202) ?? 0).toBeGreaterThan(0);
      expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
      expect(statuses.get(429) ?? 0).toBeGreaterThan(0);

      const health = await t.app.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(200);
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode, ready.body).toBe(200);
    }, 300_000);
  });
}

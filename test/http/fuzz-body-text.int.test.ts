/**
 * The fuzz suite's pass over text inside JSON bodies, on every database (SQLite always; PostgreSQL
 * and MySQL/MariaDB when configured). Every string of every JSON body the API takes — each found
 * by walking the route's request schema in the OpenAPI document, so a new field is covered without
 * a line here: properties, array items, record keys and values, every branch of a union — is set
 * to text with NUL, then with other control characters, in an otherwise valid body (one per
 * route, checked valid first). NUL is 400 `INVALID_REQUEST` naming the field, wherever it is (a
 * 503 from PostgreSQL, which refuses NUL in text, otherwise); other control characters are never
 * a 5xx (a message body may hold a newline).
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';
import { ADMIN_TOKEN, handOver, startApp, type TestApp } from './support.js';

type Schema = Record<string, unknown> & {
  type?: string | string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  minProperties?: number;
};

/** One step into a JSON value: a property, an array's item, a record's value or key, a union's branch. */
type Step = { prop: string } | { item: true } | { value: true } | { key: true } | { branch: number };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const branches = (schema: Schema) => schema.anyOf ?? schema.oneOf;
const extra = (schema: Schema) => (isObject(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined);
const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type[0] : schema.type);

/** Every path to a string in values of `schema`. */
function stringPaths(schema: Schema, depth = 0): Step[][] {
  if (depth > 8) return [];
  const union = branches(schema);
  if (union) return union.flatMap((branch, i) => stringPaths(branch, depth + 1).map((path) => [{ branch: i }, ...path]));
  if (typeOf(schema) === 'string') return [[]];
  if (typeOf(schema) === 'array' && schema.items)
    return stringPaths(schema.items, depth + 1).map((path) => [{ item: true as const }, ...path]);
  if (typeOf(schema) !== 'object') return [];
  const paths: Step[][] = Object.entries(schema.properties ?? {}).flatMap(([prop, child]) =>
    stringPaths(child, depth + 1).map((path) => [{ prop }, ...path]),
  );
  const values = extra(schema);
  if (values) paths.push([{ key: true }], ...stringPaths(values, depth + 1).map((path) => [{ value: true as const }, ...path]));
  return paths;
}

const CANDIDATES = ['x', 'sms', 'otp', 'a1', '12:00', 'Asia/Shanghai', 'https://93.184.216.34/hook', '+8613800138000'];

/** A small value `schema` takes (for the parts of a path the starting body lacks). */
function example(schema: Schema): unknown {
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  const union = branches(schema);
  if (union) return example(union.find((branch) => typeOf(branch) !== 'null') ?? union[0]!);
  switch (typeOf(schema)) {
    case 'string':
      return (
        CANDIDATES.find(
          (text) =>
            (!schema.pattern || new RegExp(schema.pattern).test(text)) &&
            text.length >= (schema.minLength ?? 0) &&
            text.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY),
        ) ?? 'x'
      );
    case 'integer':
    case 'number':
      return Math.min(Math.max(schema.minimum ?? 1, 1), schema.maximum ?? Number.POSITIVE_INFINITY);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return schema.minItems && schema.items ? [example(schema.items)] : [];
    default:
      return Object.fromEntries((schema.required ?? []).map((prop) => [prop, example(schema.properties?.[prop] ?? {})]));
  }
}

/** `value` with `text(what was there)` at `path` (what is missing on the way made from the schema). */
function place(schema: Schema, value: unknown, path: Step[], text: (current: string) => string): unknown {
  const [step, ...rest] = path;
  if (!step) return text(typeof value === 'string' ? value : String(example(schema)));
  if ('branch' in step) {
    const branch = branches(schema)![step.branch]!;
    return place(branch, value, rest, text);
  }
  if ('item' in step) {
    const items = Array.isArray(value) && value.length > 0 ? [...value] : [example(schema.items ?? {})];
    // The item that already has the field, if one does (a union's items differ in their fields).
    const next = rest[0];
    const at = Math.max(0, next && 'prop' in next ? items.findIndex((item) => isObject(item) && next.prop in item) : 0);
    items[at] = place(schema.items ?? {}, items[at], rest, text);
    return items;
  }
  const object: Record<string, unknown> = isObject(value)
    ? { ...value }
    : (example({ ...schema, anyOf: undefined }) as Record<string, unknown>);
  if ('prop' in step) {
    const child = schema.properties?.[step.prop] ?? {};
    object[step.prop] = place(child, object[step.prop] ?? example(child), rest, text);
    return object;
  }
  const values = extra(schema) ?? {};
  const [first] = Object.keys(object).filter((key) => !(key in (schema.properties ?? {})));
  const inner = first === undefined ? example(values) : object[first];
  if (first !== undefined) delete object[first];
  if ('key' in step) object[text(first ?? 'k')] = inner;
  else object[first ?? 'k'] = place(values, inner, rest, text);
  return object;
}

/** What each string is changed to (`label` in reports), and whether the change puts a NUL in it. */
const CHANGES: { label: string; nul: boolean; change: (current: string) => string }[] = [
  { label: 'a<NUL>b', nul: true, change: () => 'a\u0000b' },
  { label: '<NUL>', nul: true, change: () => '\u0000' },
  { label: '<valid><NUL>', nul: true, change: (current) => `${current}\u0000` },
  { label: '<valid><NUL><valid>', nul: true, change: (current) => `${current}\u0000${current}` },
  { label: 'a<01>b<1F><7F>', nul: false, change: () => 'a\u0001b\u001f\u007f' },
  { label: '<valid><01>', nul: false, change: (current) => `${current}\u0001` },
  { label: 'line<LF>line<TAB>', nul: false, change: () => 'line\nline\ttab' },
];

const describePath = (path: Step[]) =>
  path
    .map((step) =>
      'prop' in step ? step.prop : 'item' in step ? '[0]' : 'value' in step ? '{k}' : 'key' in step ? '{key}' : `|${step.branch}`,
    )
    .join('.');

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `text in JSON bodies on ${backend.name}`, () => {
    let database: { url: string; drop(): Promise<void> };
    let t: TestApp;
    let ids: { tenant: string; apiKey: string; provider: string; webhook: string; receipts: string; receiptToken: string; message: string };

    beforeAll(async () => {
      database = await backend.create();
      t = await startApp({ SLUICE_DB_URL: database.url });
      const tenant = await t.createTenant();
      const provider = await t.admin('POST', '/v1/admin/providers', {
        scope: tenant.id,
        channel: 'webhook',
        kind: 'console',
        name: 'p',
        qps: 10,
      });
      const webhook = await t.admin('POST', `/v1/admin/tenants/${tenant.id}/webhooks`, { url: 'https://93.184.216.34/hook' });
      expect(webhook.statusCode, webhook.body).toBe(201);
      // A vendor that pushes receipts, and its token: the receipt route checks it before the body.
      const vendor = await t.admin('POST', '/v1/admin/providers', {
        scope: '*',
        channel: 'sms',
        kind: 'aliyun-sms',
        name: 'receipts',
        qps: 10,
        config: { signName: 'Sign' },
        secret: { accessKeyId: 'id', accessKeySecret: 'secret' },
      });
      expect(vendor.statusCode, vendor.body).toBe(201);
      const token = await t.admin('POST', `/v1/admin/providers/${vendor.json().id}/receipt-token`);
      expect(token.statusCode, token.body).toBe(200);
      // A message of the tenant's to give feedback on.
      const sent = await t.app.inject({
        method: 'POST',
        url: '/v1/messages',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        payload: { channel: 'webhook', to: 'feedback-1', body: 'code 1234' },
      });
      expect(sent.statusCode, sent.body).toBe(202);
      // Feedback takes only a message handed to a provider.
      await handOver(t, sent.json().id);
      ids = {
        tenant: tenant.id,
        apiKey: tenant.apiKey,
        provider: provider.json().id,
        webhook: webhook.json().id,
        receipts: vendor.json().id,
        receiptToken: token.json().token,
        message: sent.json().id,
      };
    });
    afterAll(async () => {
      await t?.close();
      await database?.drop();
    });

    /** A valid body of each route taking JSON, keyed as the OpenAPI document names the route. */
    const starts = (): Record<string, unknown> => ({
      'POST /v1/messages': { channel: 'webhook', to: 'ops-alerts', body: 'text', subject: 's' },
      'POST /v1/messages/batch': { messages: [{ channel: 'webhook', to: 'ops-batch', body: 'text' }] },
      'POST /v1/frequency/check': { subject: 'user-1', action: 'send-code', rules: [{ windowSeconds: 60, limit: 1000 }] },
      'POST /v1/risk/check': { action: 'login', dimensions: { user: 'u1', ip: '10.0.0.1' } },
      'POST /v1/risk/events': { action: 'login', dimensions: { user: 'u1', ip: '10.0.0.1' }, outcome: 'failed', requestId: 'r1' },
      'POST /v1/admin/tenants': { name: 'fuzzed tenant' },
      'PATCH /v1/admin/tenants/{id}': { status: 'active' },
      'PUT /v1/admin/tenants/{id}/rules/{channel}': { rules: [{ windowSeconds: 60, limit: 1000, banSeconds: 0 }] },
      'PUT /v1/admin/tenants/{id}/risk/{action}': {
        rules: [
          { name: 'fails', kind: 'last-n', key: ['user'], n: 5, m: 3, outcome: 'failed' },
          { name: 'ips', kind: 'distinct', key: ['user'], of: 'ip', windowSeconds: 3600, limit: 5 },
        ],
      },
      'POST /v1/admin/tenants/{id}/blacklist': { channel: 'webhook', recipients: ['blocked-1'], reason: 'spam' },
      'DELETE /v1/admin/tenants/{id}/blacklist': { channel: 'webhook', recipients: ['blocked-1'] },
      'POST /v1/admin/blacklist': { channel: 'webhook', recipients: ['blocked-2'], reason: 'spam' },
      'DELETE /v1/admin/blacklist': { channel: 'webhook', recipients: ['blocked-2'] },
      'POST /v1/admin/providers': {
        scope: ids.tenant,
        channel: 'webhook',
        kind: 'console',
        name: 'p2',
        qps: 10,
        config: { timeoutMs: 1000 },
      },
      'PATCH /v1/admin/providers/{id}': { name: 'p-renamed' },
      'POST /v1/admin/tenants/{id}/rules/{channel}/preview': { rules: [{ windowSeconds: 60, limit: 3 }], sends: [{ atMs: 0 }] },
      'PUT /v1/admin/tenants/{id}/templates/{channel}/{name}': {
        params: { code: { type: 'string', pattern: '^\\d+$' } },
        body: 'Code {{code}}',
        subject: 'Code',
        html: '<p>{{code}}</p>',
        vendor: { 'aliyun-sms': { templateCode: 'SMS_1', signName: 'Sign', paramOrder: ['code'], region: 'cn' } },
      },
      'PUT /v1/admin/tenants/{id}/quiet-hours/{channel}': {
        timeZone: 'Asia/Shanghai',
        windows: [{ from: '22:00', to: '08:00' }],
        applies: 'bulk',
      },
      'POST /v1/admin/tenants/{id}/webhooks': { url: 'https://93.184.216.34/hook', description: 'ops' },
      'PATCH /v1/admin/tenants/{id}/webhooks/{webhookId}': { description: 'ops' },
      'POST /v1/receipts/{id}': [{ phone_number: '13800138000', success: true, biz_id: '1^0', err_code: 'DELIVERED' }],
      'POST /v1/messages/{id}/feedback': { outcome: 'confirmed' },
      'PUT /v1/admin/tenants/{id}/fraud/sms': { mode: 'monitor', countries: { block: ['KP'] }, safe: ['+8613800138000'] },
      'PUT /v1/admin/prices/sms': { currency: 'USD', default: 0.05, countries: { GB: 0.04 } },
      'PUT /v1/suppressions/{channel}/{recipient}': { category: 'marketing', reason: 'manual' },
      'PUT /v1/admin/tenants/{id}/suppressions/{channel}/{recipient}': { category: 'marketing', reason: 'manual' },
    });

    let created = 0;
    const call = (route: string, payload: unknown): Promise<LightMyRequestResponse> => {
      const [method, template] = route.split(' ') as ['POST', string];
      // Names unique per tenant and channel: each create gets its own, so none is a 409.
      if (route === 'POST /v1/admin/providers' && isObject(payload) && payload.name === 'p2') payload.name = `p2-${++created}`;
      const path = template.startsWith('/v1/admin/providers/')
        ? template.replace('{id}', ids.provider)
        : template
            .replace('{id}', route.includes('/receipts/') ? ids.receipts : route.includes('/feedback') ? ids.message : ids.tenant)
            .replace('{channel}', route.includes('templates') ? 'sms' : 'webhook')
            .replace('{name}', 'otp')
            .replace('{recipient}', 'user-42')
            .replace('{action}', 'login')
            .replace('{webhookId}', ids.webhook);
      const receipt = path.startsWith('/v1/receipts/');
      const token = path.startsWith('/v1/admin/') ? ADMIN_TOKEN : ids.apiKey;
      return t.app.inject({
        method,
        url: path,
        headers: {
          ...(receipt ? { 'sluice-receipt-token': ids.receiptToken } : { authorization: `Bearer ${token}` }),
          'content-type': 'application/json',
        },
        payload: JSON.stringify(payload),
      });
    };

    it('every string of every JSON body: NUL is 400 naming the field, other control characters never a 5xx', async () => {
      await t.app.ready();
      const spec = t.app.swagger() as {
        paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
      };
      // Admin routes first: the risk calls need the rule set the admin route stores.
      const routes = Object.entries(spec.paths)
        .flatMap(([path, operations]) =>
          Object.entries(operations).flatMap(([method, operation]) => {
            const schema = operation.requestBody?.content['application/json']?.schema;
            return schema ? [{ route: `${method.toUpperCase()} ${path}`, schema }] : [];
          }),
        )
        .sort((a, b) => Number(b.route.includes('/admin/')) - Number(a.route.includes('/admin/')));
      const bases = starts();
      // Every route that takes JSON has a starting body here, and each starting body is accepted as it is.
      expect(routes.map(({ route }) => route).filter((route) => !(route in bases))).toEqual([]);
      const refused: string[] = [];
      for (const { route } of routes) {
        const response = await call(route, bases[route]);
        if (response.statusCode >= 300) refused.push(`${route} -> ${response.statusCode} ${response.body.slice(0, 200)}`);
      }
      expect(refused).toEqual([]);

      const problems: string[] = [];
      let fields = 0;
      for (const { route, schema } of routes) {
        const paths = stringPaths(schema);
        // The vendor's push has no schema of ours: its fields by hand.
        if (route === 'POST /v1/receipts/{id}') paths.push([{ item: true }, { prop: 'biz_id' }], [{ item: true }, { prop: 'err_code' }]);
        for (const path of paths) {
          fields++;
          // Alone, and after the field's own valid value (a URL, a phone number, a zone with NUL at its end).
          for (const { label, nul, change } of CHANGES) {
            const payload = place(schema, structuredClone(bases[route]), path, change);
            const response = await call(route, payload);
            const said = `${route} ${describePath(path)}=${label} -> ${response.statusCode} ${response.body.slice(0, 160)}`;
            if (response.statusCode >= 500) problems.push(said);
            else if (nul) {
              // Refused for the NUL (before the schema, whatever else the body has), naming where it is.
              const { error } = response.json() as { error?: { code?: string; message?: string; field?: unknown } };
              const forNul = /: NUL \(U\+0000\) is not allowed in text$/.test(error?.message ?? '') && typeof error?.field === 'string';
              if (response.statusCode !== 400 || error?.code !== 'INVALID_REQUEST' || !forNul) problems.push(said);
            }
          }
        }
      }
      expect(problems).toEqual([]);
      expect(fields).toBeGreaterThan(60);
    }, 300_000);
  });
}

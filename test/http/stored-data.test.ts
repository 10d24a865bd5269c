/**
 * Stored JSON read back with its schema (issue 33, item 8): a fraud policy, the SMS prices and a
 * template version written badly straight into SQL (by another build, or by hand) make what reads
 * them a 500 `STORED_DATA_INVALID` naming the row, logged once with what is wrong, not a
 * `TypeError` logged at every send.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectError, sms, startApp, type TestApp } from './support.js';

let t: TestApp;
const chunks: string[] = [];
const lines = () =>
  chunks
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const errorLines = () => lines().filter((line) => (line.level as number) >= 50);

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  // No in-process copies of configuration: each send reads the row again.
  t = await startApp({ SLUICE_LOG_LEVEL: 'info', SLUICE_CONFIG_CACHE_MS: '0' }, { logger: pino({ level: 'info' }, stream) });
});
afterAll(() => t?.close());

const expectStoredDataInvalid = (response: Parameters<typeof expectError>[0], row: string) =>
  expect(expectError(response, 500, 'STORED_DATA_INVALID').row).toBe(row);

it('a bad fraud policy: every SMS send and the admin read are 500 naming the row, logged once', async () => {
  const tenant = await t.createTenant();
  expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/fraud/sms`, { mode: 'enforce' })).statusCode).toBe(200);
  await t.runtime.database.db
    .updateTable('fraud_policies')
    .set({ spec: JSON.stringify({ mode: 'enforce', prefixes: 'lots' }) })
    .where('tenant_id', '=', tenant.id)
    .execute();
  const row = `fraud_policies/${tenant.id}/sms`;
  const before = errorLines().length;
  for (let i = 0; i < 3; i++) expectStoredDataInvalid(await t.send(tenant.apiKey, sms(`+861380013800${i}`)), row);
  expectStoredDataInvalid(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/fraud/sms`), row);
  const logged = errorLines().slice(before);
  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatchObject({ row, code: 'STORED_DATA_INVALID', problems: [expect.stringContaining('/prefixes')] });
  // Email is not judged by the SMS policy.
  expect((await t.send(tenant.apiKey, { channel: 'email', to: 'a@example.com', subject: 's', body: 'b' })).statusCode).toBe(202);
  // Saved again through the API, it works.
  expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/fraud/sms`, { mode: 'enforce' })).statusCode).toBe(200);
  expect((await t.send(tenant.apiKey, sms('+8613800138009'))).statusCode).toBe(202);
});

it('bad SMS prices: the admin read and a policy change that needs them are 500 naming the row, logged once', async () => {
  const tenant = await t.createTenant();
  expect((await t.admin('PUT', '/v1/admin/prices/sms', { currency: 'USD', default: 0.05 })).statusCode).toBe(200);
  await t.runtime.database.db
    .updateTable('prices')
    .set({ spec: JSON.stringify({ currency: 'USD', default: '5 cents' }) })
    .where('channel', '=', 'sms')
    .execute();
  const before = errorLines().length;
  expectStoredDataInvalid(await t.admin('GET', '/v1/admin/prices/sms'), 'prices/sms');
  const capped = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/fraud/sms`, { monthlySpend: { limit: 10, currency: 'USD' } });
  expectStoredDataInvalid(capped, 'prices/sms');
  expect(errorLines().slice(before)).toEqual([
    expect.objectContaining({ row: 'prices/sms', problems: [expect.stringContaining('/default')] }),
  ]);
  expect((await t.admin('PUT', '/v1/admin/prices/sms', { currency: 'USD', default: 0.05 })).statusCode).toBe(200);
});

it('a bad template version: sends naming it and the admin reads are 500 naming the row, logged once', async () => {
  const tenant = await t.createTenant();
  const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/otp`, {
    params: { code: { type: 'string', maxLength: 8 } },
    body: 'Your code is {{code}}',
  });
  expect(put.statusCode, put.body).toBe(200);
  await t.runtime.database.db
    .updateTable('message_templates')
    .set({ spec: JSON.stringify({ params: { code: 'string' }, body: 'Your code is {{code}}' }) })
    .where('tenant_id', '=', tenant.id)
    .execute();
  const row = `message_templates/${tenant.id}/sms/otp/1`;
  const before = errorLines().length;
  const send = () => t.send(tenant.apiKey, sms('+8613800138000', { body: undefined, template: 'otp', params: { code: '1234' } }));
  expectStoredDataInvalid(await send(), row);
  expectStoredDataInvalid(await send(), row);
  expectStoredDataInvalid(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/templates/sms/otp`), row);
  expectStoredDataInvalid(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/templates`), row);
  expect(errorLines().slice(before)).toEqual([expect.objectContaining({ row, problems: [expect.stringContaining('/params/code')] })]);
});

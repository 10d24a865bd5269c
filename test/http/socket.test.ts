/**
 * The API over a real socket (loopback, any free port) with fetch(): what `inject()` cannot show —
 * real headers on the wire, Retry-After on a 429, the JSON content type.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, phone, sms, startApp, type TestApp } from './support.js';

let t: TestApp;
let base: string;
const warnings: Error[] = [];
const recordWarning = (warning: Error) => warnings.push(warning);

beforeAll(async () => {
  process.on('warning', recordWarning);
  t = await startApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  process.off('warning', recordWarning);
  await t?.close();
});

const post = (path: string, token: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('over a real socket', () => {
  it('a send is 202; over the rule it is 429 RATE_LIMITED with Retry-After', async () => {
    const created = await post('/v1/admin/tenants', ADMIN_TOKEN, { name: 'socket' });
    expect(created.status).toBe(201);
    const { id, apiKey } = (await created.json()) as { id: string; apiKey: string };
    const rules = await fetch(`${base}/v1/admin/tenants/${id}/rules/sms`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ windowSeconds: 60, limit: 1 }] }),
    });
    expect(rules.status).toBe(200);

    const accepted = await post('/v1/messages', apiKey, sms(phone(90_001)));
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await accepted.json()).toEqual({ id: expect.any(String), status: 'queued' });

    const limited = await post('/v1/messages', apiKey, sms(phone(90_001)));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('60');
    const body = (await limited.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.any(String) });
  });

  it('starting the server prints no warning (e.g. a deprecated Fastify option)', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
  });
});

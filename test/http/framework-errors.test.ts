/**
 * Errors Fastify and Node answer before a route's handler runs (the router, the body parser, the
 * HTTP parser, a closing server) must still have the contract's body, `{"error": {"code",
 * "message"}}` with a sluice code, never Fastify's `{"error": "Bad Request", "code": "FST_ERR_…"}`.
 */
import { type AddressInfo, connect } from 'node:net';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.js';
import { ADMIN_TOKEN, expectError, phone, sms, startApp, type TestApp } from './support.js';

let t: TestApp;
let apiKey: string;
beforeAll(async () => {
  t = await startApp({ SLUICE_BODY_LIMIT_BYTES: '1024', SLUICE_HTTP_REQUEST_TIMEOUT_MS: '500' });
  apiKey = (await t.createTenant()).apiKey;
});
afterAll(async () => {
  await t?.close();
});

/** The error of a response, asserting the contract's shape and that no Fastify code leaks. */
function contractError(response: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  expect(response.body).not.toContain('FST_ERR');
  return expectError(response, status, code);
}

const post = (payload: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/messages',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    payload,
  });

describe('router errors (frameworkErrors)', () => {
  it('a malformed percent-escape is 400 INVALID_REQUEST on every kind of route', async () => {
    const tenant = await t.app.inject({ method: 'GET', url: '/v1/messages/%E0%A4%A', headers: { authorization: `Bearer ${apiKey}` } });
    expect(String(contractError(tenant, 400, 'INVALID_REQUEST').message)).toContain('percent-escape');
    contractError(
      await t.app.inject({ method: 'GET', url: '/v1/admin/tenants/%E0%A4%A', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
      400,
      'INVALID_REQUEST',
    );
    contractError(await t.app.inject({ method: 'DELETE', url: '/v1/messages/%zz' }), 400, 'INVALID_REQUEST');
  });

  it('a path parameter over the router limit is 400 INVALID_REQUEST; one within it reaches the route', async () => {
    const id = `${'x'.repeat(2000)}`;
    contractError(
      await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: { authorization: `Bearer ${apiKey}` } }),
      400,
      'INVALID_REQUEST',
    );
    // A webhook recipient longer than Fastify's default limit (100): its ban can be lifted.
    const tenant = await t.createTenant();
    const target = `https://hooks.example.com/services/${'a'.repeat(150)}`;
    const lift = await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/bans/webhook/${encodeURIComponent(target)}`);
    expect(lift.statusCode, lift.body).toBe(200);
    expect(lift.json()).toEqual({ lifted: false });
  });
});

describe('body parser errors', () => {
  it.each([
    ['malformed JSON', '{"channel": "sms", ', {}, 400, 'INVALID_REQUEST'],
    ['an empty JSON body', '', {}, 400, 'INVALID_REQUEST'],
    ['an unknown media type', '<a/>', { 'content-type': 'application/xml' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a text/plain body', '{}', { 'content-type': 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a Content-Length that is not the body length', JSON.stringify(sms(phone(1))), { 'content-length': '10' }, 400, 'INVALID_REQUEST'],
    ['a body over the limit', JSON.stringify(sms(phone(1), { body: 'x'.repeat(2000) })), {}, 413, 'PAYLOAD_TOO_LARGE'],
  ] as const)('%s is the contract body', async (_name, payload, headers, status, code) => {
    contractError(await post(payload, headers), status, code);
  });
});

describe('JSON bodies', () => {
  it.each([
    ['a __proto__ key', '{"channel":"sms","__proto__":{"admin":true}}'],
    ['a nested __proto__ key', '{"channel":"sms","params":{"__proto__":{"x":"y"}}}'],
    ['a constructor.prototype key', '{"channel":"sms","constructor":{"prototype":{"admin":true}}}'],
  ])('%s is 400 INVALID_REQUEST saying such keys are refused', async (_name, payload) => {
    const error = contractError(await post(payload), 400, 'INVALID_REQUEST');
    expect(error.message).toMatch(/"__proto__" or "constructor".*refused/);
  });

  it('a syntax error is 400 INVALID_REQUEST saying what the parser found', async () => {
    const error = contractError(await post('{"channel": "sms", '), 400, 'INVALID_REQUEST');
    expect(error.message).toMatch(/^the body is not valid JSON: \S/);
    expect(error.message).not.toContain('__proto__');
  });

  it('a JSON body with a charset parameter is parsed as before', async () => {
    const response = await post(JSON.stringify(sms(phone(2))), { 'content-type': 'application/json; charset=utf-8' });
    expect(response.statusCode, response.body).toBe(202);
  });
});

describe('over a real socket', () => {
  let port: number;
  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });

  /** Writes `text` on a new connection; resolves everything the server wrote until it closed. */
  const exchange = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
      socket.write(text);
    });

  /** Each response in `raw` (HTTP/1.1 with Content-Length): its status and JSON body. */
  const responses = (raw: string) => {
    const found: { status: number; body: Record<string, unknown> }[] = [];
    let rest = Buffer.from(raw);
    while (rest.length > 0) {
      const headEnd = rest.indexOf('\r\n\r\n');
      if (headEnd < 0) break;
      const head = rest.subarray(0, headEnd).toString();
      const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? 0);
      found.push({
        status: Number(head.split(' ')[1]),
        body: JSON.parse(rest.subarray(headEnd + 4, headEnd + 4 + length).toString()) as Record<string, unknown>,
      });
      rest = rest.subarray(headEnd + 4 + length);
    }
    return found;
  };

  it.each([
    ['not HTTP', 'HELLO\r\n\r\n'],
    ['a Content-Length that is not a number', 'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n{}'],
    ['headers over the limit', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('a request the HTTP parser refuses (%s) is 400 INVALID_REQUEST in the contract shape', async (_name, text) => {
    const raw = await exchange(text);
    expect(raw).not.toContain('"statusCode"');
    expect(responses(raw)).toEqual([{ status: 400, body: { error: { code: 'INVALID_REQUEST', message: expect.any(String) } } }]);
  });

  it('a client that trickles its request is answered and cut off after SLUICE_HTTP_REQUEST_TIMEOUT_MS', async () => {
    const started = Date.now();
    // Headers promise 100 bytes of body; one arrives, then nothing.
    const raw = await exchange(
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    expect(responses(raw)).toEqual([
      { status: 400, body: { error: { code: 'INVALID_REQUEST', message: 'the request did not arrive in full in time' } } },
    ]);
    // Node looks for overdue requests every second: cut off within the timeout and one look.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a request already on a kept-alive connection when the server closes is 503 UNAVAILABLE in the contract shape, logged once at warn', async () => {
    // A second app on the same runtime whose readiness waits, so the close starts while the
    // connection has a request in flight (it is not idle, so it stays open); the next request
    // on it arrives during the close.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const logged: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          logged.push(String(chunk));
          done();
        },
      }),
    );
    const closing = await buildHttpApp({
      ...t.runtime.http,
      logger,
      logLevel: 'info',
      health: {
        ready: async () => {
          entered();
          await held;
          return { ready: true, checks: {} };
        },
      },
    });
    await closing.listen({ host: '127.0.0.1', port: 0 });
    const closingPort = (closing.server.address() as AddressInfo).port;
    const socket = connect(closingPort, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
    });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    await inHandler;
    const closed = closing.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await ended;
    await closed;
    const [first, second] = responses(received);
    expect(first).toEqual({ status: 200, body: { status: 'ready', checks: {} } });
    expect(second).toMatchObject({
      status: 503,
      body: { error: { code: 'UNAVAILABLE', message: expect.stringContaining('shutting down') } },
    });
    expect(received).not.toContain('"statusCode"');
    // An expected answer of every deploy: one warning in sluice's words, no error line with a stack.
    const lines = logged
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; refused?: number });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines.filter((line) => line.msg.includes('shutting down'))).toMatchObject([
      { level: 40, msg: expect.stringContaining('answered 503 UNAVAILABLE') },
      { level: 30, refused: 1 },
    ]);
  });
});

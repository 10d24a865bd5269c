/**
 * What the HTTP layer takes from a request before any route: the caller's X-Request-Id only in a
 * bounded, plain format, and JSON bodies only in UTF-8.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID } from '../../src/http/app.js';
import { expectError, phone, sms, startApp, type TestApp } from './support.js';

let t: TestApp;
let apiKey: string;

beforeAll(async () => {
  t = await startApp();
  // A route that fails, to read the request id a 5xx body carries (added before the app is ready).
  t.app.get('/test/fail', async () => {
    throw new Error('boom');
  });
  ({ apiKey } = await t.createTenant());
});
afterAll(async () => {
  await t?.close();
});

describe('X-Request-Id', () => {
  const requestIdOf = async (header: string | undefined) => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/test/fail',
      headers: header === undefined ? {} : { 'x-request-id': header },
    });
    return expectError(response, 500, 'INTERNAL').requestId as string;
  };
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('a plain one of 1 to 128 characters is the request id (a 5xx body shows it, the log lines carry it)', async () => {
    for (const id of ['a', 'req-7f3a', 'trace:01HZX.42_b', 'x'.repeat(128), '550e8400-e29b-41d4-a716-446655440000']) {
      expect(await requestIdOf(id)).toBe(id);
    }
  });

  it('none, or one too long or with other characters, is replaced by a generated UUID', async () => {
    for (const header of [
      undefined,
      '',
      'x'.repeat(129),
      'a b',
      '<script>alert(1)</script>',
      '{"level":60,"msg":"forged"}',
      'id\tinjected',
      'ünïcode',
      'a/b',
    ]) {
      const id = await requestIdOf(header);
      expect(id, String(header)).toMatch(UUID);
      expect(REQUEST_ID.test(id)).toBe(true);
    }
  });
});

describe('JSON bodies in UTF-8 only', () => {
  const post = (payload: Buffer) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      payload,
    });
  const json = (body: string) => Buffer.from(body, 'utf8');

  it.each([
    ['a Latin-1 byte', Buffer.concat([json('{"channel":"sms","to":"+8613800138000","body":"caf'), Buffer.from([0xe9]), json('"}')])],
    ['a lone continuation byte', Buffer.concat([json('{"channel":"sms","to":"+8613800138000","body":"'), Buffer.from([0x80]), json('"}')])],
    [
      'a truncated sequence',
      Buffer.concat([json('{"channel":"sms","to":"+8613800138000","body":"'), Buffer.from([0xe4, 0xb8]), json('"}')]),
    ],
    ['an overlong NUL', Buffer.concat([json('{"channel":"sms","to":"+8613800138000","body":"'), Buffer.from([0xc0, 0x80]), json('"}')])],
    [
      'a UTF-16 surrogate',
      Buffer.concat([json('{"channel":"sms","to":"+8613800138000","body":"'), Buffer.from([0xed, 0xa0, 0x80]), json('"}')]),
    ],
    [
      'GBK text',
      Buffer.concat([
        json('{"channel":"sms","to":"+8613800138000","body":"'),
        Buffer.from([0xd1, 0xe9, 0xd6, 0xa4, 0xc2, 0xeb]),
        json('"}'),
      ]),
    ],
  ])('%s is 400 INVALID_REQUEST, not text with U+FFFD', async (_name, payload) => {
    const error = expectError(await post(payload), 400, 'INVALID_REQUEST');
    expect(error.message).toBe('the body is not valid UTF-8');
  });

  it('valid UTF-8, multi-byte characters and a BOM included, is taken as it is', async () => {
    const accepted = await post(json(JSON.stringify(sms(phone(60_001), { body: '验证码 1234 💥 café' }))));
    expect(accepted.statusCode, accepted.body).toBe(202);
    const stored = await t.call(apiKey, 'GET', `/v1/messages/${(accepted.json() as { id: string }).id}`);
    expect(stored.statusCode).toBe(200);
    const withBom = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json(JSON.stringify(sms(phone(60_002))))]));
    expect(withBom.statusCode, withBom.body).toBe(202);
  });
});

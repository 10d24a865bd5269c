/**
 * What the HTTP layer takes from a request before any route: the caller's X-Request-Id only in a
 * bounded, plain format.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID } from '../../src/http/app.js';
import { expectError, startApp, type TestApp } from './support.js';

let t: TestApp;

beforeAll(async () => {
  t = await startApp();
  // A route that fails, to read the request id a 5xx body carries (added before the app is ready).
  t.app.get('/test/fail', async () => {
    throw new Error('boom');
  });
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

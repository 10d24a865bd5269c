/**
 * Where a webhook may be posted: the URL check before a post, and the guard on the connection
 * itself, which refuses an internal address however the name resolved at the check (DNS
 * rebinding: a name that answers a public address first and an internal one next).
 */
import { createServer, type Server } from 'node:http';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedLookup, INTERNAL_ADDRESS_REFUSED, resolvedWebhookUrlProblem } from '../../src/core/webhook-urls.js';
import { postOnce } from '../../src/providers/http-request.js';

const strict = { allowPrivate: false, allowedHosts: [] };

function lookupOf(lookup: LookupFunction, host: string, all: boolean): Promise<{ error: NodeJS.ErrnoException | null; address: unknown }> {
  return new Promise((resolve) => lookup(host, { all }, (error, address) => resolve({ error, address })));
}

describe('webhook URL checks', () => {
  it('refuses a name that resolves to loopback before the post', async () => {
    expect(await resolvedWebhookUrlProblem('http://localhost:9/hook', strict)).toMatch(/loopback or private/);
    expect(await resolvedWebhookUrlProblem('http://127.0.0.1:9/hook', strict)).toMatch(/loopback or private/);
    expect(await resolvedWebhookUrlProblem('http://localhost:9/hook', { ...strict, allowPrivate: true })).toBeUndefined();
  });

  it('the connection guard refuses internal addresses, in both lookup forms, and passes resolution errors on', async () => {
    for (const all of [false, true]) {
      const { error } = await lookupOf(guardedLookup, 'localhost', all);
      expect(error?.code).toBe('EINTERNALADDRESS');
      expect(error?.message).toBe(INTERNAL_ADDRESS_REFUSED);
    }
    const missing = await lookupOf(guardedLookup, 'no-such-host.invalid', false);
    expect(missing.error?.code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  describe('a post through the guard', () => {
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((request, response) => {
        request.resume();
        request.on('end', () => response.end('{}'));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const post = (lookup?: LookupFunction) =>
      postOnce({ providerId: 'webhook', url: `http://localhost:${port}/hook`, headers: {}, body: '{}', timeoutMs: 2000, lookup });

    it('never connects to an internal address, whatever the check before it said; without the guard it would', async () => {
      await expect(post(guardedLookup)).rejects.toThrow(/EINTERNALADDRESS/);
      expect((await post()).status).toBe(200);
    });
  });
});

/**
 * Where a webhook may be posted: the URL check before a post, and the guard on the connection
 * itself, which refuses an internal address however the name resolved at the check (DNS
 * rebinding: a name that answers a public address first and an internal one next).
 */
import { createServer, type Server } from 'node:http';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInternalAddress } from '../../src/core/internal-addresses.js';
import { guardedLookup, INTERNAL_ADDRESS_REFUSED, resolvedWebhookUrlProblem, webhookUrlProblem } from '../../src/core/webhook-urls.js';
import { postOnce } from '../../src/providers/http-request.js';

const strict = { allowPrivate: false, allowedHosts: [] };

function lookupOf(lookup: LookupFunction, host: string, all: boolean): Promise<{ error: NodeJS.ErrnoException | null; address: unknown }> {
  return new Promise((resolve) => lookup(host, { all }, (error, address) => resolve({ error, address })));
}

/** Not globally reachable (IANA's IPv4 and IPv6 special-purpose registries), and IPv4 inside IPv6 that is. */
const INTERNAL = [
  '0.0.0.0',
  '10.1.2.3',
  '100.64.0.1',
  '127.0.0.1',
  '169.254.169.254',
  '172.16.0.1',
  '192.0.0.8',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.1.1',
  '198.18.0.1',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '240.0.0.1',
  '255.255.255.255',
  '::',
  '::1',
  '::127.0.0.1',
  '::7f00:1',
  '::8.8.8.8',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:0:7f00:1',
  '::ffff:0:8.8.8.8',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::8.8.8.8',
  '100::1',
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '2001:2::1',
  '2001:db8::1',
  '2002:7f00:1::1',
  '2002:808:808::1',
  '3fff::1',
  '5f00::1',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'fec0::1',
  'ff02::1',
];
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '2606:4700:4700::1111',
  '2a00:1450:4001::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::8.8.8.8',
];

describe('webhook URL checks', () => {
  it('refuses every range not globally reachable, IPv4 inside IPv6 too, and passes public addresses', () => {
    expect(INTERNAL.filter((address) => !isInternalAddress(address))).toEqual([]);
    expect(PUBLIC.filter((address) => isInternalAddress(address))).toEqual([]);
    // As URL hosts, the way a tenant would spell them.
    for (const host of ['[::127.0.0.1]', '[::ffff:0:7f00:1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::1]', '[fec0::1]', '192.0.2.1'])
      expect(webhookUrlProblem(`http://${host}/hook`, strict), host).toMatch(/loopback or private/);
  });

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

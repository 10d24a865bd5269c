/**
 * Where a webhook may be posted: the URL check, the one resolution of its host (its addresses
 * checked), and the connection made to exactly those addresses (DNS rebinding, a name that answers
 * a public address to the check and an internal one next, has no second answer to give).
 */
import { createServer, type Server } from 'node:http';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInternalAddress } from '../../src/core/internal-addresses.js';
import {
  fixedLookup,
  INTERNAL_ADDRESS_REFUSED,
  resolvedWebhookUrlProblem,
  resolveWebhookTarget,
  webhookUrlProblem,
} from '../../src/core/webhook-urls.js';
import { postOnce } from '../../src/providers/http-request.js';

const strict = { allowPrivate: false, allowedHosts: [] };

function lookupOf(lookup: LookupFunction, host: string, options: { all?: boolean; family?: number }) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: unknown }>((resolve) =>
    lookup(host, options as never, (error, address, family) => resolve({ error, address, family })),
  );
}

/** A resolver answering from a table, counting what it is asked. */
function tableResolver(table: Record<string, string[][]>) {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const answers = table[host];
    if (!answers) throw Object.assign(new Error(`${host} does not resolve (no address)`), { code: 'ENOTFOUND' });
    return answers[Math.min(asked.filter((name) => name === host).length, answers.length) - 1]!;
  };
  return { asked, resolve };
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

  it('refuses a host that is or resolves to an internal address, before and without posting', async () => {
    const { asked, resolve } = tableResolver({ 'inside.example': [['93.184.216.34', '10.0.0.7']], 'outside.example': [['93.184.216.34']] });
    expect(await resolvedWebhookUrlProblem('http://localhost:9/hook', strict, resolve)).toMatch(/loopback or private/);
    expect(await resolvedWebhookUrlProblem('http://127.0.0.1:9/hook', strict, resolve)).toMatch(/loopback or private/);
    expect(await resolvedWebhookUrlProblem('http://inside.example/hook', strict, resolve)).toBe(INTERNAL_ADDRESS_REFUSED);
    expect(await resolvedWebhookUrlProblem('http://outside.example/hook', strict, resolve)).toBeUndefined();
    expect(await resolvedWebhookUrlProblem('http://nowhere.example/hook', strict, resolve)).toBe(
      'url host does not resolve: nowhere.example does not resolve (no address)',
    );
    // Private targets allowed: nothing to resolve when storing.
    asked.length = 0;
    expect(await resolvedWebhookUrlProblem('http://inside.example/hook', { ...strict, allowPrivate: true }, resolve)).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('a fixed lookup answers its addresses in both lookup forms, by family, and asks nothing', async () => {
    const lookup = fixedLookup(['10.0.0.1', 'fd00::1']);
    expect(await lookupOf(lookup, 'any.example', {})).toMatchObject({ error: null, address: '10.0.0.1', family: 4 });
    expect(await lookupOf(lookup, 'any.example', { family: 6 })).toMatchObject({ error: null, address: 'fd00::1', family: 6 });
    expect((await lookupOf(lookup, 'any.example', { all: true })).address).toEqual([
      { address: '10.0.0.1', family: 4 },
      { address: 'fd00::1', family: 6 },
    ]);
    expect((await lookupOf(fixedLookup(['10.0.0.1']), 'any.example', { family: 6 })).error?.code).toBe('ENOTFOUND');
  });

  describe('a post to the addresses checked', () => {
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

    it('resolves the host once and connects there: a second, different answer (rebinding) is never asked for', async () => {
      // The name answers loopback first (where the server listens), then an address that would fail.
      const { asked, resolve } = tableResolver({ 'rebind.example': [['127.0.0.1'], ['192.0.2.1']] });
      const url = `http://rebind.example:${port}/hook`;
      const target = await resolveWebhookTarget(url, { ...strict, allowPrivate: true }, resolve);
      expect(target).toEqual({ addresses: ['127.0.0.1'] });
      const answer = await postOnce({
        providerId: 'webhook',
        url,
        headers: {},
        body: '{}',
        timeoutMs: 2000,
        pool: 'webhook',
        lookup: fixedLookup(target.problem === undefined ? (target.addresses ?? []) : []),
      });
      expect(answer.status).toBe(200);
      expect(asked).toEqual(['rebind.example']);
      // Strict: the same first answer is refused before any connection.
      expect((await resolveWebhookTarget(url, strict, tableResolver({ 'rebind.example': [['127.0.0.1']] }).resolve)).problem).toBe(
        INTERNAL_ADDRESS_REFUSED,
      );
    });
  });
});

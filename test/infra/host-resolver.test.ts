/**
 * The resolver of the hosts tenants control, against a real DNS server on a UDP socket of
 * 127.0.0.1 (`test/support/dns-server.ts`) that answers some names and never answers others: a
 * name that hangs costs its owner its turns and its own lookups their time, and nothing else —
 * not another tenant's lookups, not libuv's thread pool.
 */
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HostResolver } from '../../src/infra/host-resolver.js';
import { ManualClock } from '../../src/limiter/index.js';
import { type DnsServer, startDnsServer } from '../support/dns-server.js';

const waitUntil = async (condition: () => boolean, timeoutMs = 5000): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
};

describe('HostResolver', () => {
  let dns: DnsServer;
  let resolver: HostResolver | undefined;
  const clock = new ManualClock(1_000_000);
  const make = (timeoutMs: number, perOwner = 2) => {
    resolver = new HostResolver({ servers: [dns.address], timeoutMs, perOwner, clock });
    return resolver;
  };
  const queried = (name: string) => dns.queries.filter((query) => query.name === name).length;

  beforeAll(async () => {
    dns = await startDnsServer();
    dns.records.set('ok.b.test', { v4: ['127.0.0.1'] });
    dns.records.set('dual.test', { v4: ['192.0.2.1'], v6: ['2001:db8::1'], ttl: 30 });
    dns.records.set('later.a.test', { v4: ['192.0.2.3'] });
  });
  afterEach(() => {
    resolver?.close();
    dns.hangs = () => false;
  });
  afterAll(() => dns.close());

  it('asks the configured server for A and AAAA, and reuses the answer for its TTL', async () => {
    const resolver = make(2000);
    expect(await resolver.resolve('Dual.Test', 'tenant-a')).toEqual(['192.0.2.1', '2001:db8::1']);
    expect(queried('dual.test')).toBe(2);
    clock.advance(29_000);
    expect(await resolver.resolve('dual.test', 'tenant-b')).toEqual(['192.0.2.1', '2001:db8::1']);
    expect(queried('dual.test')).toBe(2);
    clock.advance(2000);
    await resolver.resolve('dual.test', 'tenant-b');
    expect(queried('dual.test')).toBe(4);
  });

  it('answers IP literals and localhost itself (c-ares reads no /etc/hosts), and says when a name has no address', async () => {
    const resolver = make(2000);
    const before = dns.queries.length;
    expect(await resolver.resolve('192.0.2.9', 'a')).toEqual(['192.0.2.9']);
    expect(await resolver.resolve('[2001:db8::9]', 'a')).toEqual(['2001:db8::9']);
    expect(await resolver.resolve('localhost', 'a')).toEqual(['127.0.0.1', '::1']);
    expect(await resolver.resolve('api.localhost', 'a')).toEqual(['127.0.0.1', '::1']);
    expect(dns.queries.length).toBe(before);
    await expect(resolver.resolve('missing.test', 'a')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('a name whose DNS never answers fails at the bound, and the thread pool stays free meanwhile', async () => {
    const resolver = make(1500);
    dns.hangs = (name) => name === 'hang.a.test';
    let settled = false;
    const hung = resolver.resolve('hang.a.test', 'tenant-a').finally(() => {
      settled = true;
    });
    hung.catch(() => undefined);
    expect(await waitUntil(() => queried('hang.a.test') > 0)).toBe(true);
    // More than the pool's four threads of work that needs them, while the name hangs.
    const pooled = await Promise.all([
      ...Array.from({ length: 8 }, () => lookup('localhost')),
      ...Array.from({ length: 8 }, () => readFile(new URL(import.meta.url))),
    ]);
    expect(pooled).toHaveLength(16);
    expect(settled).toBe(false);
    await expect(hung).rejects.toMatchObject({ code: 'ETIMEOUT', message: 'hang.a.test: no DNS answer within 1500 ms' });
  });

  it('one name is asked once however many lookups wait for it; an owner has at most its turns; other owners pass', async () => {
    const resolver = make(4000, 2);
    dns.hangs = (name) => name.startsWith('hang');
    const first = Array.from({ length: 8 }, () => resolver.resolve('hang1.a.test', 'tenant-a'));
    const second = resolver.resolve('hang2.a.test', 'tenant-a');
    const third = resolver.resolve('later.a.test', 'tenant-a');
    second.catch(() => undefined);
    expect(await waitUntil(() => queried('hang1.a.test') > 0 && queried('hang2.a.test') > 0)).toBe(true);
    // Tenant B's name resolves while both of A's turns are held.
    expect(await resolver.resolve('ok.b.test', 'tenant-b')).toEqual(['127.0.0.1']);
    expect(queried('later.a.test')).toBe(0);
    // Eight lookups of hang1 are one query per type (and c-ares's one retry), not eight.
    expect(queried('hang1.a.test')).toBeLessThanOrEqual(4);
    // hang1 starts answering: c-ares's retry gets it, the turn passes to A's waiting lookup.
    dns.records.set('hang1.a.test', { v4: ['192.0.2.2'] });
    dns.hangs = (name) => name === 'hang2.a.test';
    expect(await Promise.all(first)).toEqual(Array.from({ length: 8 }, () => ['192.0.2.2']));
    expect(await third).toEqual(['192.0.2.3']);
    await expect(second).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it('a lookup through lookupFor answers in the shape net asks for', async () => {
    const resolver = make(2000);
    const lookupOf = (options: object) =>
      new Promise<unknown[]>((resolve) =>
        resolver.lookupFor('a')('dual.test', options as never, (error, address, family) => resolve([error, address, family])),
      );
    expect(await lookupOf({})).toEqual([null, '192.0.2.1', 4]);
    expect(await lookupOf({ all: true })).toEqual([
      null,
      [
        { address: '192.0.2.1', family: 4 },
        { address: '2001:db8::1', family: 6 },
      ],
      undefined,
    ]);
  });
});

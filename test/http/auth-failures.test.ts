/**
 * The failure limit on authentication: wrong admin tokens and API keys counted per client address;
 * past the limit the address is answered 429 AUTH_THROTTLED before its credential is checked (the
 * right one included) until the window has room again. Time is the test's ManualClock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressFailureLimit, addressKey } from '../../src/http/auth-failures.js';
import { ManualClock } from '../../src/limiter/clock.js';
import { ADMIN_TOKEN, expectError, startApp, type TestApp } from './support.js';

const LIMIT = 5;
const WINDOW_MS = 60_000;

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ SLUICE_AUTH_FAILURE_LIMIT: String(LIMIT), SLUICE_AUTH_FAILURE_WINDOW_MS: String(WINDOW_MS) });
});
afterAll(() => t?.close());

const admin = (token: string | undefined, remoteAddress: string) =>
  t.app.inject({
    method: 'GET',
    url: '/v1/admin/tenants',
    remoteAddress,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
const tenantCall = (apiKey: string, remoteAddress: string) =>
  t.app.inject({ method: 'GET', url: '/v1/messages/nope', remoteAddress, headers: { authorization: `Bearer ${apiKey}` } });

async function failures(realm: string, outcome: string): Promise<number> {
  const metric = await t.runtime.metrics.registry.getSingleMetric('sluice_auth_failures_total')?.get();
  return metric?.values.find((value) => value.labels.realm === realm && value.labels.outcome === outcome)?.value ?? 0;
}

describe('wrong credentials per client address', () => {
  it('admin: after the limit of wrong tokens, even the right one is 429 AUTH_THROTTLED until the window has room', async () => {
    const address = '198.51.100.7';
    for (let i = 0; i < LIMIT; i++) expectError(await admin(`guess-${i}`, address), 401, 'UNAUTHORIZED');
    const throttled = expectError(await admin(ADMIN_TOKEN, address), 429, 'AUTH_THROTTLED');
    expect(throttled.retryAfterSeconds).toBe(WINDOW_MS / 1000);
    expect(await failures('admin', 'wrong')).toBe(LIMIT);
    expect(await failures('admin', 'throttled')).toBe(1);
    // Another address is not affected; the guesser's own is let in again once its first guess left the window.
    expect((await admin(ADMIN_TOKEN, '198.51.100.8')).statusCode).toBe(200);
    t.clock.advance(WINDOW_MS - 1000);
    expect((await admin(ADMIN_TOKEN, address)).headers['retry-after']).toBe('1');
    t.clock.advance(1000);
    expect((await admin(ADMIN_TOKEN, address)).statusCode).toBe(200);
  });

  it('tenant: wrong API keys count against the address, across admin and tenant calls; a missing key does not', async () => {
    const tenant = await t.createTenant();
    const address = '203.0.113.9';
    for (let i = 0; i < 10; i++) expectError(await admin(undefined, address), 401, 'UNAUTHORIZED');
    expect((await tenantCall(tenant.apiKey, address)).statusCode).toBe(404);
    expectError(await admin('wrong', address), 401, 'UNAUTHORIZED');
    for (let i = 1; i < LIMIT; i++) expectError(await tenantCall(`sk_guess_${i}`, address), 401, 'UNAUTHORIZED');
    expectError(await tenantCall(tenant.apiKey, address), 429, 'AUTH_THROTTLED');
    const send = await t.app.inject({
      method: 'POST',
      url: '/v1/messages',
      remoteAddress: address,
      headers: { authorization: `Bearer ${tenant.apiKey}` },
      payload: { channel: 'sms', to: '+8613800138000', body: 'x' },
    });
    expectError(send, 429, 'AUTH_THROTTLED');
    expect(await failures('tenant', 'wrong')).toBe(LIMIT - 1);
    t.clock.advance(WINDOW_MS);
  });

  it('counts an IPv6 client by its /64, and IPv4-mapped addresses as IPv4', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('192.0.2.1')).toBe('192.0.2.1');
  });

  it('counts every IPv6 spelling of an IPv4 address as that address, and distinct hosts apart', () => {
    const spellings = [
      '::ffff:198.51.100.7',
      '::FFFF:198.51.100.7',
      '::ffff:c633:6407',
      '::FFFF:C633:6407',
      '::ffff:C633:6407%eth0',
      '0:0:0:0:0:ffff:c633:6407',
      '0000:0000:0000:0000:0000:ffff:c633:6407',
      '0:0:0:0:0:FFFF:198.51.100.7',
      '0::ffff:c633:6407',
      '::0:ffff:c633:6407',
      '::ffff:0:c633:6407',
      '::ffff:0:198.51.100.7',
      '0:0:0:0:ffff:0:c633:6407',
      '::198.51.100.7',
      '::c633:6407',
      '64:ff9b::c633:6407',
      '64:ff9b::198.51.100.7',
      '2002:c633:6407::1',
      '2002:c633:6407:abcd:1:2:3:4',
      // Teredo: the client's address inverted in the last 32 bits.
      '2001:0:4136:e378:8000:63bf:39cc:9bf8',
    ];
    for (const spelling of spellings) expect(addressKey(spelling), spelling).toBe('198.51.100.7');
    const hosts = ['::ffff:c633:6408', '::ffff:c633:6507', '::ffff:c733:6407', '::ffff:0:c633:640a', '2002:c633:640b::1', '198.51.100.9'];
    expect(new Set([...hosts.map(addressKey), addressKey('::ffff:c633:6407')]).size).toBe(hosts.length + 1);
    // Neither loopback nor the unspecified address is an IPv4 host.
    expect(addressKey('::')).toBe('0:0:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });

  it('holds a bounded number of addresses, whatever a client with many addresses does', async () => {
    const clock = new ManualClock(0);
    const limit = new AddressFailureLimit({ limit: 1, windowMs: WINDOW_MS, clock, maxAddresses: 100 });
    for (let i = 0; i < 5000; i++) {
      const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      await limit.failed(address);
      expect(limit.blockedFor(address)).toBe(WINDOW_MS);
    }
    expect(limit.addresses.counted).toBeLessThanOrEqual(100);
    expect(limit.addresses.blocked).toBeLessThanOrEqual(100);
  });
});

describe('behind a proxy', () => {
  it('without SLUICE_TRUST_PROXY every client of the proxy shares its address; with it, each counts apart', async () => {
    const shared = await startApp({ SLUICE_AUTH_FAILURE_LIMIT: '2' });
    const trusting = await startApp({ SLUICE_AUTH_FAILURE_LIMIT: '2', SLUICE_TRUST_PROXY: '127.0.0.1' });
    try {
      for (const app of [shared, trusting]) {
        const call = (token: string, client: string) =>
          app.app.inject({
            method: 'GET',
            url: '/v1/admin/tenants',
            remoteAddress: '127.0.0.1',
            headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': client },
          });
        expect((await call('wrong', '192.0.2.1')).statusCode).toBe(401);
        expect((await call('wrong', '192.0.2.1')).statusCode).toBe(401);
        const other = await call(ADMIN_TOKEN, '192.0.2.2');
        expect(other.statusCode).toBe(app === shared ? 429 : 200);
      }
    } finally {
      await shared.close();
      await trusting.close();
    }
  });

  it('with SLUICE_TRUST_PROXY, IPv4 hosts forwarded in hex IPv6 forms each count apart, and one host in every spelling counts as one', async () => {
    const trusting = await startApp({ SLUICE_AUTH_FAILURE_LIMIT: '30', SLUICE_TRUST_PROXY: '127.0.0.1' });
    try {
      const call = (token: string, client: string) =>
        trusting.app.inject({
          method: 'GET',
          url: '/v1/admin/tenants',
          remoteAddress: '127.0.0.1',
          headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': client },
        });
      const spellings = ['::ffff:c633:6407', '::ffff:198.51.100.7', '0:0:0:0:0:FFFF:C633:6407', '::ffff:0:c633:6407', '198.51.100.7'];
      for (let i = 0; i < 30; i++) expect((await call('wrong', spellings[i % spellings.length]!)).statusCode).toBe(401);
      for (const spelling of spellings) expectError(await call(ADMIN_TOKEN, spelling), 429, 'AUTH_THROTTLED');
      for (const other of ['::ffff:c633:6408', '::ffff:cb00:7109', '::ffff:0:c633:6408', '198.51.100.8'])
        expect((await call(ADMIN_TOKEN, other)).statusCode, other).toBe(200);
    } finally {
      await trusting.close();
    }
  });
});

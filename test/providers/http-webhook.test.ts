import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { createHttpWebhookProvider } from '../../src/providers/http-webhook.js';
import type { OutboundMessage, ProviderError } from '../../src/providers/provider.js';
import { type LocalHttpServer, type RecordedRequest, rejectionOf, startLocalHttpServer } from './local-http-server.js';

const SECRET = 'whsec-test-secret';
const NOW_MS = 1_714_979_289_750;

/** What a receiver does: parse t and v1, recompute over the raw body, compare in constant time, refuse stale t. */
function receiverAccepts(request: RecordedRequest, secret: string, nowSeconds: number): boolean {
  const header = String(request.headers['x-sluice-signature'] ?? '');
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.split('=') as [string, string]));
  if (!parts.t || !parts.v1 || Math.abs(Number(parts.t) - nowSeconds) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${request.body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A receiver as the Standard Webhooks spec describes it, written here from the spec (not with
 * sluice's signing code): the key is the secret's part after `whsec_`, base64-decoded; the signed
 * text is `<webhook-id>.<webhook-timestamp>.<raw body>`; any space-separated `v1,` entry may match.
 */
function standardReceiverAccepts(
  headers: Record<string, string | string[] | undefined>,
  body: string,
  secret: string,
  nowSeconds: number,
): boolean {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = String(headers['webhook-timestamp'] ?? '');
  if (!id || !/^\d+$/.test(timestamp) || Math.abs(Number(timestamp) - nowSeconds) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((entry) => entry === `v1,${expected}`);
}

/** The spec's published test vector (standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts). */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1_614_265_330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('generic HTTP webhook against a local receiver', () => {
  let server: LocalHttpServer;
  const clock = new ManualClock(NOW_MS);
  const message: OutboundMessage = {
    id: 'msg-http-1',
    tenantId: 'tenant-a',
    channel: 'webhook',
    to: 'billing-hook',
    subject: 'Invoice',
    body: 'paid',
    params: { amount: '12.50' },
  };
  const provider = (options: { secret?: string; url?: string; timeoutMs?: number } = {}) =>
    createHttpWebhookProvider({
      id: 'hook-billing',
      channel: 'webhook',
      url: options.url ?? `${server.url}/hooks/sluice`,
      signingSecret: options.secret ?? SECRET,
      timeoutMs: options.timeoutMs ?? 5_000,
      clock,
    });
  const receiverAnswers = (ok: { status?: number; body?: string | object }) =>
    server.answer((request) =>
      receiverAccepts(request, SECRET, Math.floor(NOW_MS / 1000)) ? ok : { status: 401, body: { error: 'bad signature' } },
    );

  beforeAll(async () => {
    server = await startLocalHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('posts the signed message with idempotency headers; the id comes from the answer', async () => {
    receiverAnswers({ status: 202, body: { id: 'rcv-778' } });
    expect(await provider().send(message)).toEqual({ providerMessageId: 'rcv-778' });
    const request = server.requests.at(-1)!;
    expect(request.path).toBe('/hooks/sluice');
    expect(request.headers['x-sluice-message-id']).toBe('msg-http-1');
    expect(request.headers['idempotency-key']).toBe('msg-http-1');
    expect(String(request.headers['x-sluice-signature'])).toMatch(/^t=1714979289,v1=[0-9a-f]{64}$/);
    expect(JSON.parse(request.body)).toEqual({
      id: 'msg-http-1',
      tenantId: 'tenant-a',
      channel: 'webhook',
      to: 'billing-hook',
      subject: 'Invoice',
      body: 'paid',
      params: { amount: '12.50' },
    });
  });

  it('signs with the Standard Webhooks headers too, which a receiver following the spec verifies', async () => {
    // The receiver is right: it accepts the spec's own test vector.
    const vectorHeaders = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature };
    expect(standardReceiverAccepts(vectorHeaders, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(true);
    expect(standardReceiverAccepts(vectorHeaders, `${VECTOR.body} `, VECTOR.secret, VECTOR.timestamp)).toBe(false);

    // The vector's secret on the provider, its clock at the vector's time, the vector's id as the message's.
    const vectorClock = new ManualClock(VECTOR.timestamp * 1000 + 250);
    server.answer((request) =>
      standardReceiverAccepts(request.headers, request.body, VECTOR.secret, VECTOR.timestamp)
        ? { status: 200, body: { id: 'ok' } }
        : { status: 401, body: 'bad signature' },
    );
    const signed = createHttpWebhookProvider({
      id: 'hook-standard',
      channel: 'webhook',
      url: `${server.url}/hooks/standard`,
      signingSecret: VECTOR.secret,
      timeoutMs: 5_000,
      clock: vectorClock,
    });
    expect(await signed.send({ ...message, id: VECTOR.id })).toEqual({ providerMessageId: 'ok' });
    const request = server.requests.at(-1)!;
    expect(request.headers['webhook-id']).toBe(VECTOR.id);
    expect(request.headers['webhook-timestamp']).toBe(String(VECTOR.timestamp));
    expect(String(request.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // The earlier header stays, keyed by the secret's whole text, for receivers written for it.
    expect(receiverAccepts(request, VECTOR.secret, VECTOR.timestamp)).toBe(true);
    // Signed with another secret, the spec's receiver refuses it.
    expect(standardReceiverAccepts(request.headers, request.body, 'whsec_c29tZXRoaW5nIGVsc2U=', VECTOR.timestamp)).toBe(false);
  });

  it('falls back to the sluice id when the answer has no JSON id', async () => {
    receiverAnswers({ status: 200, body: 'thanks' });
    expect(await provider().send(message)).toEqual({ providerMessageId: 'msg-http-1' });
  });

  it('is refused by the receiver when signed with another secret: 401 is permanent', async () => {
    receiverAnswers({ status: 200, body: { id: 'never' } });
    const error = (await rejectionOf(provider({ secret: 'other' }).send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['HTTP_401', false]);
  });

  it.each([
    [400, false],
    [404, false],
    [422, false],
    [408, true],
    [429, true],
    [500, true],
    [503, true],
  ])('classifies HTTP %i as retryable=%s', async (status, retryable) => {
    receiverAnswers({ status, body: { error: 'no' } });
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([error.status, error.retryable]).toEqual([status, retryable]);
  });

  it('reads Retry-After as seconds or as an HTTP date', async () => {
    server.answer(() => ({ status: 503, body: 'busy', headers: { 'retry-after': '120' } }));
    expect(((await rejectionOf(provider().send(message))) as ProviderError).retryAfterMs).toBe(120_000);
    server.answer(() => ({ status: 429, body: 'busy', headers: { 'retry-after': new Date(Date.now() + 60_000).toUTCString() } }));
    const fromDate = ((await rejectionOf(provider().send(message))) as ProviderError).retryAfterMs ?? -1;
    expect(fromDate).toBeGreaterThan(50_000);
    expect(fromDate).toBeLessThanOrEqual(60_000);
  });

  it('times out a receiver that never answers: retryable TIMEOUT', async () => {
    server.answer(() => ({ hang: true }));
    const error = (await rejectionOf(provider({ timeoutMs: 200 }).send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['TIMEOUT', true]);
  });

  it('stops when the caller aborts: retryable ABORTED', async () => {
    server.answer(() => ({ hang: true }));
    const controller = new AbortController();
    const sending = provider().send(message, controller.signal);
    setTimeout(() => controller.abort(), 50);
    const error = (await rejectionOf(sending)) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['ABORTED', true]);
  });

  it('treats a refused connection as a retryable NETWORK error', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = (await rejectionOf(provider({ url: `http://127.0.0.1:${port}/x` }).send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['NETWORK', true]);
    expect(error.message).toContain('ECONNREFUSED');
    // The reason, not the vendor's address: the tenant reads this in the message's attempts.
    expect(error.message).not.toContain(`127.0.0.1:${port}`);
  });

  it('does not follow a redirect: the 3xx is a permanent failure', async () => {
    server.answer(() => ({ status: 302, body: '', headers: { location: 'http://127.0.0.1:1/elsewhere' } }));
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect(error.retryable).toBe(false);
    expect(server.requests.at(-1)?.path).toBe('/hooks/sluice');
  });

  it('speaks TLS to an https URL and refuses a certificate it cannot verify', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    let reached = 0;
    const tls = createHttpsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_request, response) => {
        reached++;
        response.end('{}');
      },
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      const port = (tls.address() as { port: number }).port;
      const error = (await rejectionOf(provider({ url: `https://127.0.0.1:${port}/x` }).send(message))) as ProviderError;
      expect([error.code, error.retryable]).toEqual(['NETWORK', true]);
      expect(error.message).toContain('SELF_SIGNED');
      expect(reached).toBe(0);
    } finally {
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });
});

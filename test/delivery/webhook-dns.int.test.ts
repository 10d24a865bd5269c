/**
 * One tenant's DNS holds up no other tenant (DESIGN.md §12). Tenant A's webhook endpoint is on a
 * name whose DNS never answers (a real DNS server on 127.0.0.1 that swallows its queries, set as
 * SLUICE_DNS_SERVERS), and A sends enough messages to keep every post slot of its endpoint busy.
 * Meanwhile tenant B's sends reach B's vendor and B's callbacks reach B's endpoint (both found
 * through the same DNS server), and work that needs libuv's thread pool (`dns.lookup`, file reads)
 * is done, all while A's name has still not given up; then A's posts fail at the DNS bound.
 */
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { type DnsServer, startDnsServer } from '../support/dns-server.js';
import {
  addWebhookProvider,
  countFinal,
  silentConsole,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
  waitFor,
} from './delivery-support.js';

const DNS_TIMEOUT_MS = 6000;

describe("a tenant's DNS that never answers", () => {
  let runtime: Runtime;
  let delivery: Delivery;
  let dns: DnsServer;
  let vendor: WebhookStub;
  let receiver: Server;
  let port = 0;
  const received: string[] = [];
  let cleanup = () => {};

  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    dns = await startDnsServer();
    dns.hangs = (name) => name.endsWith('.a.test');
    vendor = await startWebhookStub();
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        received.push(body);
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
    for (const name of ['hooks.b.test', 'vendor.b.test', 'vendor.a.test']) dns.records.set(name, { v4: ['127.0.0.1'] });
    runtime = await testRuntime(
      testEnv(temp.dir, undefined, {
        SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
        SLUICE_WEBHOOK_POLL_MS: '50',
        SLUICE_DNS_SERVERS: dns.address,
        SLUICE_DNS_TIMEOUT_MS: String(DNS_TIMEOUT_MS),
      }),
    );
    delivery = startWorker(runtime, silentConsole());
  });

  afterAll(async () => {
    // A's lookups in flight give up at once, rather than at the bound, so the worker stops now.
    runtime?.resolver.close();
    await delivery?.stop();
    await runtime?.close();
    await vendor?.close();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
    await dns?.close();
    cleanup();
  });

  async function tenantWith(endpointHost: string) {
    const tenant = await runtime.http.tenants.createTenant(`t-${endpointHost}-${Date.now()}`);
    // A's vendor is an IP literal (its sends must happen for its events to exist); B's is a name.
    const vendorUrl = endpointHost.endsWith('.a.test') ? vendor.url : vendor.url.replace('127.0.0.1', 'vendor.b.test');
    await addWebhookProvider(runtime, tenant.id, `${vendorUrl}/vendor`);
    const webhook = await runtime.services.webhooks.create(tenant.id, { url: `http://${endpointHost}:${port}/events` });
    return { tenant, webhook: webhook! };
  }

  const send = async (apiKey: string, count: number, prefix: string) => {
    const ids: string[] = [];
    for (let k = 0; k < count; k++)
      ids.push((await runtime.http.messages.send(apiKey, { channel: 'webhook', to: `${prefix}-${k}`, body: 'x' })).id);
    return ids;
  };

  it("holds up only A's own callbacks, and A's posts fail at the DNS bound", async () => {
    const a = await tenantWith('hooks.a.test');
    const b = await tenantWith('hooks.b.test');
    await send(a.tenant.apiKey, 16, 'a');
    expect(await waitFor(() => dns.queries.some((query) => query.name === 'hooks.a.test'), 10_000)).toBe(true);
    const aStuck = async () => {
      const events = (await runtime.services.webhooks.listEvents(a.tenant.id, a.webhook.id, { status: 'pending' })) ?? [];
      return events.length > 0 && events.every((event) => event.attempts === 0);
    };

    const bIds = await send(b.tenant.apiKey, 3, 'b');
    const [pooled] = await Promise.all([
      Promise.all([
        ...Array.from({ length: 8 }, () => lookup('localhost')),
        ...Array.from({ length: 8 }, () => readFile(new URL(import.meta.url))),
      ]),
      waitFor(async () => (await countFinal(runtime, bIds)) === 3, 20_000),
      waitFor(() => received.length === 3, 20_000),
    ]);
    expect(pooled).toHaveLength(16);
    // B's vendor (vendor.b.test) took each message, and B's endpoint (hooks.b.test) heard of it.
    const events = received.map((body) => JSON.parse(body) as { type: string; data: { messageId: string } });
    expect(events.map((event) => event.type)).toEqual(['message.sent', 'message.sent', 'message.sent']);
    expect(events.map((event) => event.data.messageId).sort()).toEqual([...bIds].sort());
    // All of that while A's name had not yet given up: none of A's posts has settled.
    expect(await aStuck()).toBe(true);
    // Eight posts in flight to A's endpoint share one lookup of its name: fewer queries than one A and AAAA per post.
    expect(dns.queries.filter((query) => query.name === 'hooks.a.test').length).toBeLessThan(16);

    expect(
      await waitFor(async () => {
        const events = (await runtime.services.webhooks.listEvents(a.tenant.id, a.webhook.id, { status: 'pending' })) ?? [];
        return events.some((event) => event.attempts > 0);
      }, DNS_TIMEOUT_MS + 10_000),
    ).toBe(true);
    const tried = (await runtime.services.webhooks.listEvents(a.tenant.id, a.webhook.id, { status: 'pending' }))!.find(
      (event) => event.attempts > 0,
    )!;
    expect(tried.lastError).toMatch(/^url host does not resolve: hooks\.a\.test: no DNS answer within 6000 ms$/);
  }, 60_000);
});

/**
 * Fair delivery (docs/operations.md, "Fair delivery"), through real dispatchers and real HTTP
 * endpoints on 127.0.0.1, on the embedded default (SQLite, SQL claim), on PostgreSQL + Redis
 * (the due index's tenant queues) and in broker mode (PostgreSQL + Redis + NATS JetStream):
 * - a tenant whose endpoint answers after 9 s, or whose endpoint's DNS never answers (a real DNS
 *   server on 127.0.0.1 that swallows its queries), holds only its share of the send slots:
 *   another tenant's sends arrive within 1 s of when they arrive with it idle;
 * - on a provider shared at 20 QPS, another tenant's transactional send behind a backlog of 600
 *   (bulk or transactional) leaves within 1 s, and its 20 bulk sends all leave before the backlog
 *   has sent 100 more;
 * - tenants weighing 3, 2 and 1 that saturate a shared pace get 3:2:1 of its sends, within 5 %.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { uniquePrefix } from '../broker/support.js';
import { type DnsServer, startDnsServer } from '../support/dns-server.js';
import { describeWith, servers } from '../support/servers.js';
import { dropStreams } from './broker-support.js';
import {
  addWebhookProvider,
  createPgDatabase,
  percentile,
  silentConsole,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
  waitFor,
  withDatabaseUrl,
} from './delivery-support.js';

const CONCURRENCY = 8;

/** An endpoint that answers each request after `delayMs` (or when closed). */
async function startSlowEndpoint(delayMs: number): Promise<{ url: string; arrived: () => number; close(): Promise<void> }> {
  let arrived = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    request.resume();
    arrived++;
    const timer = setTimeout(() => {
      timers.delete(timer);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"slow"}');
    }, delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived: () => arrived,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function fairnessSuite(setup: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>) {
  let runtime: Runtime;
  let delivery: Delivery;
  let stub: WebhookStub;
  let dns: DnsServer;
  let drop = async () => {};
  let cleanup = () => {};
  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    stub = await startWebhookStub();
    dns = await startDnsServer();
    dns.hangs = (name) => name.endsWith('.silent.test');
    dns.records.set('vendor.good.test', { v4: ['127.0.0.1'] });
    const backend = await setup();
    drop = backend.drop;
    runtime = await testRuntime({
      ...testEnv(temp.dir, undefined, {
        SLUICE_SEND_CONCURRENCY: String(CONCURRENCY),
        SLUICE_MAX_ATTEMPTS: '100',
        SLUICE_DNS_SERVERS: dns.address,
        SLUICE_DNS_TIMEOUT_MS: '30000',
        SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
      }),
      ...backend.env,
    });
    delivery = startWorker(runtime, silentConsole());
  });
  afterAll(async () => {
    // The silent lookups in flight give up at once, so the worker stops now.
    runtime?.resolver.close();
    await delivery?.stop();
    await runtime?.close();
    await stub?.close();
    await dns?.close();
    await drop();
    cleanup();
  });

  const tenant = async (name: string) =>
    runtime.http.tenants.createTenant(`${name}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`);
  /** Milliseconds from accept to arrival of each of `count` sends of `key`'s tenant. */
  const latencies = async (key: string, count: number, label: string): Promise<number[]> => {
    const acceptedAt = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      const result = await runtime.http.messages.send(key, { channel: 'webhook', to: `${label}-${i}`, body: `hello ${i}` });
      acceptedAt.set(result.id, Date.now());
    }
    expect(await waitFor(() => [...acceptedAt.keys()].every((id) => stub.arrivals.has(id)), 30_000)).toBe(true);
    return [...acceptedAt].map(([id, at]) => stub.arrivals.get(id)![0]! - at).sort((a, b) => a - b);
  };

  it("a tenant whose endpoint answers after 9 s does not delay another tenant's sends", async () => {
    const slow = await startSlowEndpoint(9000);
    try {
      const good = await tenant('good');
      await addWebhookProvider(runtime, good.id, `${stub.url}/good`, { name: `good-${good.id}` });
      const alone = await latencies(good.apiKey, 10, 'alone');

      const hostile = await tenant('slow');
      await addWebhookProvider(runtime, hostile.id, `${slow.url}/slow`, { name: `slow-${hostile.id}` });
      await runtime.http.messages.sendBatch(
        hostile.apiKey,
        Array.from({ length: 200 }, (_, i) => ({ channel: 'webhook', to: `slow-${i}`, body: `slow ${i}` })),
      );
      // Every slot of the pool is held by the slow endpoint's requests.
      expect(await waitFor(() => slow.arrived() >= CONCURRENCY, 10_000)).toBe(true);
      const beside = await latencies(good.apiKey, 10, 'beside');
      expect(percentile(beside, 99)).toBeLessThan(percentile(alone, 99) + 1000);
      await runtime.http.tenants.updateTenant(hostile.id, { status: 'suspended' });
    } finally {
      await slow.close();
    }
  }, 60_000);

  it("a tenant whose endpoint's DNS never answers does not delay another tenant's sends", async () => {
    const good = await tenant('good-dns');
    const port = new URL(stub.url).port;
    await addWebhookProvider(runtime, good.id, `http://vendor.good.test:${port}/good-dns`, { name: `good-dns-${good.id}` });
    const alone = await latencies(good.apiKey, 20, 'dns-alone');

    const hostile = await tenant('silent');
    await addWebhookProvider(runtime, hostile.id, `http://vendor.silent.test:${port}/silent`, { name: `silent-${hostile.id}` });
    const held = (
      await runtime.http.messages.sendBatch(
        hostile.apiKey,
        Array.from({ length: 300 }, (_, i) => ({ channel: 'webhook', to: `silent-${i}`, body: `silent ${i}` })),
      )
    ).map((result) => result.id!);
    // Sends wait for the silent name in slots (all of them when the tenant is alone; its share beside the other tests' tenants).
    const sending = async () =>
      Number(
        (
          await runtime.database.db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('tenant_id', '=', hostile.id)
            .where('status', '=', 'sending')
            .executeTakeFirst()
        )?.n ?? 0,
      );
    expect(await waitFor(async () => (await sending()) >= CONCURRENCY / 4, 10_000)).toBe(true);
    const beside = await latencies(good.apiKey, 20, 'dns-beside');
    expect(percentile(beside, 99)).toBeLessThan(percentile(alone, 99) + 1000);
    expect(held.some((id) => stub.arrivals.has(id))).toBe(false);
    await runtime.http.tenants.updateTenant(hostile.id, { status: 'suspended' });
  }, 60_000);

  it('tenants weighing 3, 2 and 1 that saturate a shared pace get 3:2:1 of its sends, within 5 %', async () => {
    const qps = 60;
    const tenants = [await tenant('w3'), await tenant('w2'), await tenant('w1')];
    for (const [i, weight] of [3, 2, 1].entries()) await runtime.http.tenants.updateTenant(tenants[i]!.id, { sendWeight: weight });
    await addWebhookProvider(runtime, '*', `${stub.url}/weighted`, { name: `weighted-${Date.now()}`, qps });
    const ids = await Promise.all(
      tenants.map(async (t, i) =>
        (
          await runtime.http.messages.sendBatch(
            t.apiKey,
            Array.from({ length: 600 }, (_, n) => ({ channel: 'webhook', to: `w${i}-${n}`, body: `w ${n}`, priority: 'bulk' as const })),
          )
        ).map((result) => result.id!),
      ),
    );
    // Counted over the sends after the first 60 (the claims' warm-up) and before any tenant runs out.
    expect(await waitFor(() => ids.flat().filter((id) => stub.arrivals.has(id)).length >= 60 + 540, 60_000)).toBe(true);
    const arrivals = ids
      .flatMap((list, i) => list.map((id) => ({ tenant: i, at: stub.arrivals.get(id)?.[0] })))
      .filter((entry): entry is { tenant: number; at: number } => entry.at !== undefined)
      .sort((x, y) => x.at - y.at)
      .slice(60, 600);
    const shares = [0, 1, 2].map((i) => arrivals.filter((entry) => entry.tenant === i).length / arrivals.length);
    for (const [i, expected] of [3 / 6, 2 / 6, 1 / 6].entries()) expect(Math.abs(shares[i]! - expected) / expected).toBeLessThan(0.05);
    for (const t of tenants) await runtime.http.tenants.updateTenant(t.id, { status: 'suspended' });
  }, 90_000);

  for (const lane of ['bulk', 'transactional'] as const) {
    it(`on a provider shared at 20 QPS, another tenant's sends are not behind a backlog of 600 ${lane}`, async () => {
      const [a, b] = [await tenant('a'), await tenant('b')];
      const path = `/shared-${lane}`;
      await addWebhookProvider(runtime, '*', `${stub.url}${path}`, { name: `shared-${lane}-${Date.now()}`, qps: 20 });
      const backlog = (
        await runtime.http.messages.sendBatch(
          a.apiKey,
          Array.from({ length: 600 }, (_, i) => ({ channel: 'webhook', to: `a-${i}`, body: `a ${i}`, priority: lane })),
        )
      ).map((result) => result.id!);
      const sentOfA = () => backlog.filter((id) => stub.arrivals.has(id)).length;
      expect(await waitFor(() => sentOfA() >= 20, 10_000)).toBe(true);

      const acceptedAt = Date.now();
      const urgent = await runtime.http.messages.send(b.apiKey, { channel: 'webhook', to: 'b-otp', body: 'code 1234' });
      expect(await waitFor(() => stub.arrivals.has(urgent.id), 10_000)).toBe(true);
      expect(stub.arrivals.get(urgent.id)![0]! - acceptedAt).toBeLessThan(1000);

      // Bulk behind bulk: B's 20 leave before A has sent 100 more (behind A's transactional ones they wait: lanes first).
      if (lane === 'bulk') {
        const before = sentOfA();
        const bulk = (
          await runtime.http.messages.sendBatch(
            b.apiKey,
            Array.from({ length: 20 }, (_, i) => ({ channel: 'webhook', to: `b-${i}`, body: `b ${i}`, priority: 'bulk' as const })),
          )
        ).map((result) => result.id!);
        expect(await waitFor(() => bulk.every((id) => stub.arrivals.has(id)), 20_000)).toBe(true);
        expect(sentOfA() - before).toBeLessThan(100);
      }
      // The rest of the backlog waits: a suspended tenant's messages are claimed by no one.
      await runtime.http.tenants.updateTenant(a.id, { status: 'suspended' });
    }, 90_000);
  }
}

describe('fair delivery, embedded (SQLite, SQL claim)', () => {
  fairnessSuite(async () => ({ env: {}, drop: async () => {} }));
});

describeWith(
  servers.pgUrl && servers.redisUrl,
  'SLUICE_TEST_PG_URL and SLUICE_TEST_REDIS_URL',
  'fair delivery, PostgreSQL + Redis (due index tenant queues)',
  () => {
    fairnessSuite(async () => {
      const database = await createPgDatabase(servers.pgUrl as string);
      const prefix = `fair-${process.pid}-${Date.now()}:`;
      return {
        env: { ...withDatabaseUrl({}, database.url), SLUICE_REDIS_URL: servers.redisUrl as string, SLUICE_REDIS_KEY_PREFIX: prefix },
        drop: database.drop,
      };
    });
  },
);

describeWith(
  servers.pgUrl && servers.redisUrl && servers.natsUrl,
  'SLUICE_TEST_PG_URL, SLUICE_TEST_REDIS_URL and SLUICE_TEST_NATS_URL',
  'fair delivery, broker mode (PostgreSQL + Redis + JetStream)',
  () => {
    fairnessSuite(async () => {
      const database = await createPgDatabase(servers.pgUrl as string);
      const prefix = uniquePrefix();
      return {
        env: {
          ...withDatabaseUrl({}, database.url),
          SLUICE_REDIS_URL: servers.redisUrl as string,
          SLUICE_REDIS_KEY_PREFIX: `${prefix}:`,
          SLUICE_BROKER_URL: servers.natsUrl as string,
          SLUICE_BROKER_PREFIX: prefix,
        },
        drop: async () => {
          await dropStreams(servers.natsUrl as string, prefix).catch(() => undefined);
          await database.drop();
        },
      };
    });
  },
);

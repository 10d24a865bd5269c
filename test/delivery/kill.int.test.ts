/**
 * At least once under kill -9 (DESIGN.md §6): two real service instances (`sluice serve`, one
 * worker-only, one api+worker) share a PostgreSQL database and a private redis-server. 5,000
 * messages are accepted up front; while they are sent to a webhook stub, the instance holding
 * the dispatch lock is SIGKILLed at 5 random moments and restarted at once. Afterwards every
 * message must be `sent` and must have reached the stub at least once (nothing lost); a message
 * may arrive twice only if its request was in flight at a kill, so the duplicates are at most
 * kills × SLUICE_SEND_CONCURRENCY. The stub paces nothing; the provider's QPS (a token bucket
 * shared through Redis) stretches the sending over ~17 s so that the kills land mid-stream.
 * The tenant's webhook endpoint (a local server checking every signature) must receive, after
 * all, the `accepted` and `sent` events of every message, in that order (duplicates counted).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifySignature } from '../../src/core/webhook-signature.js';
import type { Runtime } from '../../src/main/runtime.js';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../support/private-redis.js';
import { type Instance, killInstance, startInstance } from '../support/serve-instance.js';
import { describeWith, servers } from '../support/servers.js';
import {
  addWebhookProvider,
  countFinal,
  createPgDatabase,
  loadMessages,
  sleep,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
  waitFor,
  withDatabaseUrl,
} from './delivery-support.js';

const COUNT = 5000;
const KILLS = 5;
const SEND_CONCURRENCY = 32;
const PROVIDER_QPS = 300;

describeWith(servers.pgUrl && privateRedisBin, 'SLUICE_TEST_PG_URL and SLUICE_TEST_REDIS_BIN', 'delivery under kill -9', () => {
  let redis: PrivateRedis;
  let database: { url: string; drop(): Promise<void> };
  let stub: WebhookStub;
  let runtime: Runtime;
  let env: Record<string, string>;
  const instances: Instance[] = [];
  /** Event types answered 2xx per message id, in order of arrival; posts whose signature failed. */
  const events = new Map<string, string[]>();
  let badSignatures = 0;
  let secret = '';
  let receiver: Server;
  let receiverUrl = '';
  const temp = tempDir();
  const keyPrefix = `kill-${process.pid}-${Math.random().toString(36).slice(2, 8)}:`;

  const start = (roles: string) => startInstance(env, roles);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    database = await createPgDatabase(servers.pgUrl as string);
    stub = await startWebhookStub();
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (!verifySignature(text, String(request.headers['sluice-signature']), secret, Math.floor(Date.now() / 1000))) {
          badSignatures++;
          response.writeHead(400).end();
          return;
        }
        const body = JSON.parse(text) as { type: string; data: { messageId: string } };
        events.set(body.data.messageId, [...(events.get(body.data.messageId) ?? []), body.type]);
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
    env = withDatabaseUrl(
      testEnv(temp.dir, redis.url, {
        SLUICE_LEASE_MS: '1500',
        SLUICE_REDIS_KEY_PREFIX: keyPrefix,
        // One partition: one dispatcher sends at a time, so a kill interrupts at most
        // SLUICE_SEND_CONCURRENCY sends (each slot is held until its outcome is committed).
        SLUICE_PARTITIONS: '1',
        SLUICE_SEND_CONCURRENCY: String(SEND_CONCURRENCY),
        SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
        SLUICE_WEBHOOK_RETRY_BASE_MS: '50',
        SLUICE_WEBHOOK_RETRY_MAX_MS: '500',
      }),
      database.url,
    );
    // Migrates the database and creates the secret key file the children share.
    runtime = await testRuntime(env);
  });

  afterAll(async () => {
    await Promise.all(instances.map(killInstance));
    await runtime?.close();
    await stub?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await redis?.stop();
    await database?.drop();
    temp.cleanup();
  });

  it('loses nothing and duplicates only what was in flight at a kill, nor any status event', { timeout: 150_000 }, async () => {
    const tenant = await runtime.services.tenants.createTenant(`kill-${Date.now()}`);
    await addWebhookProvider(runtime, tenant.id, `${stub.url}/kill`, { qps: PROVIDER_QPS });
    const webhook = await runtime.services.webhooks.create(tenant.id, { url: receiverUrl, events: ['message.accepted', 'message.sent'] });
    secret = webhook!.secret;
    const ids: string[] = [];
    for (let start = 0; start < COUNT; start += 250) {
      const batch = Array.from({ length: Math.min(250, COUNT - start) }, (_, k) =>
        runtime.services.messages.send(tenant.apiKey, { channel: 'webhook', to: `kill-${start + k}`, body: `hello ${start + k}` }),
      );
      for (const result of await Promise.all(batch)) ids.push(result.id);
    }

    instances.push(start('worker'), start('api,worker'));
    const lockKey = `${keyPrefix}lock:{dispatch:webhook:0}`;
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    let kills = 0;
    try {
      // Each kill lands while messages flow: once 150 more have arrived since the last one (the
      // survivor took over or the restarted instance is up), then after a random 0–1 s.
      while (kills < KILLS && stub.arrivals.size < COUNT) {
        const mark = stub.arrivals.size;
        const flowed = await waitFor(() => stub.arrivals.size >= Math.min(COUNT, mark + 150), 30_000);
        if (!flowed) for (const i of instances) console.log(i.roles, i.output.join(''));
        expect(flowed).toBe(true);
        await sleep(Math.random() * 1000);
        if (stub.arrivals.size >= COUNT) break;
        const holder = await client.get(lockKey);
        const holderPid = holder?.split(':')[1];
        const index = instances.findIndex((instance) => String(instance.child.pid) === holderPid);
        const victim = index >= 0 ? index : Math.floor(Math.random() * instances.length);
        const instance = instances[victim] as Instance;
        await killInstance(instance);
        kills++;
        console.log(
          `${new Date().toISOString()} kill ${kills}: pid ${instance.child.pid} (${instance.roles}${index >= 0 ? ', lock holder' : ''}) after ${stub.arrivals.size} of ${COUNT} arrived`,
        );
        instances[victim] = start(instance.roles);
      }
    } finally {
      client.disconnect();
    }
    expect(kills).toBe(KILLS);

    const done = await waitFor(async () => (await countFinal(runtime, ids)) === ids.length, 60_000);
    if (!done) for (const instance of instances) console.log(`[${instance.roles}] ${instance.output.join('')}`);
    expect(done).toBe(true);

    const messages = await loadMessages(runtime, ids);
    let duplicates = 0;
    let duplicated = 0;
    for (const id of ids) {
      expect(messages.get(id)?.status, `${id}: ${messages.get(id)?.lastError}`).toBe('sent');
      const arrived = stub.arrivals.get(id)?.length ?? 0;
      expect(arrived, `${id} never reached the provider`).toBeGreaterThanOrEqual(1);
      if (arrived > 1) {
        duplicates += arrived - 1;
        duplicated++;
      }
    }
    console.log(
      `kill -9 ×${kills}: ${COUNT} messages all sent; ${duplicates} duplicate requests (${duplicated} messages), bound ${kills * SEND_CONCURRENCY}`,
    );
    expect(duplicates).toBeLessThanOrEqual(kills * SEND_CONCURRENCY);

    // Every status change's event arrives, in order per message; duplicates are allowed, counted.
    const complete = (id: string) => {
      const types = events.get(id) ?? [];
      return types.includes('message.accepted') && types.includes('message.sent');
    };
    expect(await waitFor(() => ids.every(complete), 60_000)).toBe(true);
    let eventDuplicates = 0;
    for (const id of ids) {
      const types = events.get(id)!;
      eventDuplicates += types.length - 2;
      expect(types.indexOf('message.sent'), id).toBeGreaterThan(types.indexOf('message.accepted'));
    }
    expect(badSignatures).toBe(0);
    console.log(`kill -9 ×${kills}: ${2 * COUNT} status events all delivered; ${eventDuplicates} duplicate posts`);
  });
});

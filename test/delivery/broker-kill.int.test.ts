/**
 * Broker mode under kill -9 (issue 25's "done means"): two real service instances (`sluice
 * serve`, one worker-only, one api+worker) share a PostgreSQL database, Redis and a nats-server
 * with JetStream of the test's own (its monitoring endpoint on). 1,500 messages are accepted up
 * front; while the workers pull and send them to a webhook stub (paced by the provider's QPS,
 * shared through Redis, so the kill lands mid-stream), the worker-only instance is SIGKILLed.
 * Its jobs come again to the survivor once the ack wait runs out. Afterwards every message is
 * `sent` and reached the stub; a message arrives twice only if its send was in the victim's
 * hands at the kill (at most SLUICE_SEND_CONCURRENCY), since a redelivery of a committed outcome
 * finds its row finished. `/jsz` shows the deliver stream and the channel's consumer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Runtime } from '../../src/main/runtime.js';
import { uniquePrefix } from '../broker/support.js';
import { type PrivateNats, privateNatsBin, startPrivateNats } from '../support/private-nats.js';
import { type Instance, killInstance, startInstance } from '../support/serve-instance.js';
import { describeWith, servers } from '../support/servers.js';
import { sendMessages, streamsOf, stubTenant } from './broker-support.js';
import {
  countFinal,
  createPgDatabase,
  loadMessages,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
  waitFor,
  withDatabaseUrl,
} from './delivery-support.js';

const COUNT = 1500;
const SEND_CONCURRENCY = 16;
const PROVIDER_QPS = 250;

interface Jsz {
  account_details?: {
    stream_detail?: { name: string; state: { messages: number }; consumer_detail?: { name: string; num_redelivered: number }[] }[];
  }[];
}

describeWith(
  servers.pgUrl && servers.redisUrl && privateNatsBin,
  'SLUICE_TEST_PG_URL, SLUICE_TEST_REDIS_URL and SLUICE_TEST_NATS_BIN',
  'broker mode under kill -9',
  () => {
    let nats: PrivateNats;
    let database: { url: string; drop(): Promise<void> };
    let stub: WebhookStub;
    let runtime: Runtime;
    let env: Record<string, string>;
    const instances: Instance[] = [];
    const temp = tempDir();
    const prefix = uniquePrefix();

    const start = (roles: string) => startInstance(env, roles);

    beforeAll(async () => {
      nats = await startPrivateNats();
      database = await createPgDatabase(servers.pgUrl as string);
      stub = await startWebhookStub();
      env = withDatabaseUrl(
        testEnv(temp.dir, servers.redisUrl, {
          SLUICE_BROKER_URL: nats.url,
          SLUICE_BROKER_PREFIX: prefix,
          // The victim's jobs go to the survivor 2 s after their last progress report.
          SLUICE_BROKER_ACK_WAIT_MS: '2000',
          SLUICE_LEASE_MS: '1500',
          SLUICE_REDIS_KEY_PREFIX: `${prefix}:`,
          SLUICE_SEND_CONCURRENCY: String(SEND_CONCURRENCY),
        }),
        database.url,
      );
      // Migrates the database and creates the secret key file the children share; sends nothing.
      runtime = await testRuntime(env);
    });

    afterAll(async () => {
      await Promise.all(instances.map(killInstance));
      await runtime?.close();
      await stub?.close();
      await nats?.stop();
      await database?.drop();
      temp.cleanup();
    });

    it('every message arrives, duplicates are at most what the victim had in hand, /jsz shows the stream and its consumer', {
      timeout: 120_000,
    }, async () => {
      const tenant = await stubTenant({ runtime, stub }, 'kill', { qps: PROVIDER_QPS });
      const ids = await sendMessages(runtime, tenant.apiKey, COUNT);

      instances.push(start('worker'), start('api,worker'));
      // Mid-stream: a third of the messages arrived, both workers pulling.
      expect(await waitFor(() => stub.arrivals.size >= COUNT / 3, 60_000)).toBe(true);
      await killInstance(instances[0]!);
      const arrivedAtKill = stub.arrivals.size;
      console.log(`kill -9 of the worker-only instance after ${arrivedAtKill} of ${COUNT} arrived`);

      const done = await waitFor(async () => (await countFinal(runtime, ids)) === ids.length, 60_000);
      if (!done) for (const instance of instances) console.log(`[${instance.roles}] ${instance.output.join('')}`);
      expect(done).toBe(true);

      const messages = await loadMessages(runtime, ids);
      let duplicates = 0;
      // Claimed twice: claimed by the victim and not committed when it died (in flight), then redelivered.
      let inFlight = 0;
      for (const id of ids) {
        const message = messages.get(id);
        expect(message?.status, `${id}: ${message?.lastError}`).toBe('sent');
        const arrived = stub.arrivals.get(id)?.length ?? 0;
        expect(arrived, `${id} never reached the provider`).toBeGreaterThanOrEqual(1);
        duplicates += Math.max(0, arrived - 1);
        if ((message?.attempts ?? 0) > 1) inFlight++;
      }
      console.log(
        `broker kill -9: ${COUNT} messages all sent; ${duplicates} duplicate requests; ${inFlight} in flight at the victim (its places: ${SEND_CONCURRENCY})`,
      );
      expect(inFlight).toBeGreaterThan(0);
      expect(inFlight).toBeLessThanOrEqual(SEND_CONCURRENCY);
      expect(duplicates).toBeLessThanOrEqual(inFlight);

      const { deliver } = streamsOf(prefix);
      const jsz = (await (await fetch(`${nats.monitorUrl}/jsz?streams=true&consumers=true`)).json()) as Jsz;
      const stream = jsz.account_details?.flatMap((account) => account.stream_detail ?? []).find((detail) => detail.name === deliver);
      expect(stream?.state.messages).toBe(0);
      const consumer = stream?.consumer_detail?.find((detail) => detail.name === 'deliver-webhook');
      expect(consumer).toBeDefined();
      console.log(`/jsz: ${deliver} holds ${stream?.state.messages} jobs; deliver-webhook redelivered ${consumer?.num_redelivered}`);
    });
  },
);

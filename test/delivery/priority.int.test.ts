/**
 * Priority under a saturated provider pace, through a real dispatcher: a bulk backlog far longer
 * than the pace can drain is sent, and transactional messages accepted behind it go out within
 * one claim batch (SLUICE_SEND_CONCURRENCY sends), not behind the backlog. Embedded (SQL claim)
 * and Redis (due index lanes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../support/private-redis.js';
import { describeWith } from '../support/servers.js';
import {
  addWebhookProvider,
  silentConsole,
  sleep,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
  waitFor,
} from './delivery-support.js';

const CONCURRENCY = 10;
const QPS = 20;

function prioritySuite(redisUrl: () => string | undefined) {
  let runtime: Runtime;
  let delivery: Delivery;
  let stub: WebhookStub;
  let cleanup = () => {};
  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    stub = await startWebhookStub();
    runtime = await testRuntime(testEnv(temp.dir, redisUrl(), { SLUICE_SEND_CONCURRENCY: String(CONCURRENCY) }));
    delivery = startWorker(runtime, silentConsole());
  });
  afterAll(async () => {
    await delivery?.stop();
    await runtime?.close();
    await stub?.close();
    cleanup();
  });

  it('transactional messages accepted behind a bulk backlog are sent within one claim batch', async () => {
    const tenant = await runtime.http.tenants.createTenant(`priority-${Date.now()}`);
    await addWebhookProvider(runtime, tenant.id, `${stub.url}/paced`, { name: 'paced', qps: QPS });
    const bulk = await runtime.http.messages.sendBatch(
      tenant.apiKey,
      Array.from({ length: 200 }, (_, i) => ({ channel: 'webhook', to: `bulk-${i}`, body: `campaign ${i}` })),
    );
    const bulkIds = bulk.map((result) => result.id!);
    expect(bulkIds.every(Boolean)).toBe(true);
    // Let the dispatcher saturate the pace with bulk sends.
    expect(await waitFor(() => stub.arrivals.size >= 20, 10_000)).toBe(true);
    const acceptedAt = Date.now();
    const urgent = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        runtime.http.messages.send(tenant.apiKey, { channel: 'webhook', to: `otp-${i}`, body: `code ${i}` }),
      ),
    );
    const urgentIds = urgent.map((result) => result.id);
    expect(await waitFor(() => urgentIds.every((id) => stub.arrivals.has(id)), 10_000)).toBe(true);
    const lastUrgent = Math.max(...urgentIds.map((id) => stub.arrivals.get(id)![0]!));
    const bulkBetween = bulkIds.filter((id) => {
      const at = stub.arrivals.get(id)?.[0];
      return at !== undefined && at > acceptedAt && at < lastUrgent;
    }).length;
    // At most the claim already taken (and one partly free batch) goes before them; the backlog waits.
    expect(bulkBetween).toBeLessThanOrEqual(2 * CONCURRENCY);
    const bulkSent = bulkIds.filter((id) => stub.arrivals.has(id)).length;
    expect(bulkSent).toBeLessThan(150);
    const stored = await runtime.repositories.messages.get(bulkIds[0]!);
    expect(stored?.priority).toBe('bulk');
    expect((await runtime.repositories.messages.get(urgentIds[0]!))?.priority).toBe('transactional');
    await sleep(0);
  }, 30_000);
}

describe('priority, embedded (SQL claim)', () => prioritySuite(() => undefined));

describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'priority, Redis (due index lanes)', () => {
  let redis: PrivateRedis | undefined;
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  prioritySuite(() => redis?.url);
});

/**
 * Broker mode when the broker fails, each on a nats-server of the test's own: the broker down
 * (accepts go on, due messages wait in SQL and leave when it is back; `/readyz` shows it, the
 * metrics count the failed publishes), the broker restarted with its store lost (the jobs it held
 * are published again from SQL), the consumer and then the stream deleted by an operator (both
 * made again, nothing lost), and a job lost without any of that (the sweep publishes it again
 * once its hand-off is older than SLUICE_BROKER_REPUBLISH_AFTER_MS).
 *
 * To keep jobs waiting in the stream, most tests pull one job at a time (SLUICE_SEND_CONCURRENCY=1)
 * for a provider paced to a few sends a second, with a hand-off window of 100
 * (SLUICE_BROKER_HANDOFF_WINDOW) so the stream holds what is due.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { operator } from '../broker/support.js';
import { type PrivateNats, privateNatsBin, startPrivateNats } from '../support/private-nats.js';
import { describeWith, servers } from '../support/servers.js';
import {
  type BrokerFixture,
  brokerFixture,
  deliverStreamMessages,
  metricValue,
  sendMessages,
  streamsOf,
  stubTenant,
} from './broker-support.js';
import { countFinal, loadMessages, waitFor } from './delivery-support.js';

const redisUrl = servers.redisUrl as string;

describeWith(privateNatsBin && redisUrl, 'SLUICE_TEST_NATS_BIN and SLUICE_TEST_REDIS_URL', 'delivery through a failing broker', () => {
  let nats: PrivateNats | undefined;
  let fixture: BrokerFixture | undefined;

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
    await nats?.stop();
    nats = undefined;
  });

  /** Every one of `ids` sent, and each reached the stub exactly once. */
  async function allSentOnce(f: BrokerFixture, ids: string[], timeoutMs = 30_000): Promise<void> {
    expect(await waitFor(async () => (await countFinal(f.runtime, ids)) === ids.length, timeoutMs)).toBe(true);
    const messages = await loadMessages(f.runtime, ids);
    for (const id of ids) {
      expect(messages.get(id)?.status).toBe('sent');
      expect(f.stub.arrivals.get(id)?.length, id).toBe(1);
    }
  }

  it('the broker down: accepts go on, due messages wait and leave when it is back; /readyz and the metrics tell', async () => {
    nats = await startPrivateNats();
    fixture = await brokerFixture(nats.url, { redisUrl });
    const tenant = await stubTenant(fixture, 'down');
    const before = await sendMessages(fixture.runtime, tenant.apiKey, 20);
    await allSentOnce(fixture, before);

    await nats.kill();
    const during = await sendMessages(fixture.runtime, tenant.apiKey, 50);
    expect(during).toHaveLength(50);
    expect(
      await waitFor(async () => (await metricValue(fixture!.runtime, 'sluice_broker_publish_failures_total', { what: 'due' })) > 0, 10_000),
    ).toBe(true);
    const ready = await fixture.runtime.services.health.ready();
    expect(ready.ready).toBe(true);
    expect(ready.checks.broker).toMatchObject({ ok: true, warning: 'the broker is not available' });
    expect(await metricValue(fixture.runtime, 'sluice_broker_connected')).toBe(0);
    expect(await countFinal(fixture.runtime, during)).toBe(0);
    expect((await loadMessages(fixture.runtime, during)).get(during[0]!)?.handedOffAt).toBeNull();

    await nats.restart();
    await allSentOnce(fixture, during);
    expect((await fixture.runtime.services.health.ready()).checks.broker).toMatchObject({ ok: true });
    expect((await fixture.runtime.services.health.ready()).checks.broker?.warning).toBeUndefined();
  });

  it('the broker restarted with its store lost: the jobs it held are published again from SQL', async () => {
    nats = await startPrivateNats();
    fixture = await brokerFixture(nats.url, { redisUrl, env: { SLUICE_SEND_CONCURRENCY: '1', SLUICE_BROKER_HANDOFF_WINDOW: '100' } });
    const tenant = await stubTenant(fixture, 'lost', { qps: 4 });
    const ids = await sendMessages(fixture.runtime, tenant.apiKey, 16);
    const { deliver } = streamsOf(fixture.prefix);
    expect(await waitFor(async () => (await deliverStreamMessages(nats!.url, fixture!.prefix)) >= 10, 10_000)).toBe(true);

    await nats.kill();
    rmSync(join(nats.storeDir, 'jetstream'), { recursive: true, force: true });
    await nats.restart();
    // The sweep's bound is an hour: only the stream's new start can say the jobs are gone.
    await allSentOnce(fixture, ids);
    const admin = await operator(nats.url);
    expect((await admin.jsm.streams.info(deliver)).state.messages).toBe(0);
    await admin.close();
  });

  it('an operator deletes the consumer, then the stream: both are made again, and every message is sent', async () => {
    nats = await startPrivateNats();
    fixture = await brokerFixture(nats.url, { redisUrl, env: { SLUICE_SEND_CONCURRENCY: '1', SLUICE_BROKER_HANDOFF_WINDOW: '100' } });
    const tenant = await stubTenant(fixture, 'deleted', { qps: 5 });
    const { deliver } = streamsOf(fixture.prefix);
    const admin = await operator(nats.url);
    try {
      const first = await sendMessages(fixture.runtime, tenant.apiKey, 10);
      expect(await waitFor(async () => (await deliverStreamMessages(nats!.url, fixture!.prefix)) >= 5, 10_000)).toBe(true);
      // Jobs waiting in the stream stay there without their consumer: the next one made takes them.
      await admin.jsm.consumers.delete(deliver, 'deliver-webhook');
      await allSentOnce(fixture, first);

      const second = await sendMessages(fixture.runtime, tenant.apiKey, 10);
      expect(await waitFor(async () => (await deliverStreamMessages(nats!.url, fixture!.prefix)) >= 5, 10_000)).toBe(true);
      await admin.jsm.streams.delete(deliver);
      await allSentOnce(fixture, second);
      expect((await admin.jsm.consumers.info(deliver, 'deliver-webhook')).config.durable_name).toBe('deliver-webhook');
    } finally {
      await admin.close();
    }
  });

  it('a job lost with its stream intact (purged): the sweep publishes it again once its hand-off is older than the bound', async () => {
    nats = await startPrivateNats();
    fixture = await brokerFixture(nats.url, {
      redisUrl,
      env: { SLUICE_SEND_CONCURRENCY: '1', SLUICE_BROKER_HANDOFF_WINDOW: '100', SLUICE_BROKER_REPUBLISH_AFTER_MS: '2000' },
    });
    const tenant = await stubTenant(fixture, 'purged', { qps: 5 });
    const ids = await sendMessages(fixture.runtime, tenant.apiKey, 10);
    expect(await waitFor(async () => (await deliverStreamMessages(nats!.url, fixture!.prefix)) >= 5, 10_000)).toBe(true);
    const admin = await operator(nats.url);
    await admin.jsm.streams.purge(streamsOf(fixture.prefix).deliver);
    await admin.close();
    await allSentOnce(fixture, ids);
    expect(await metricValue(fixture.runtime, 'sluice_broker_handoffs_total')).toBeGreaterThan(ids.length);
  });
});

/**
 * Delivery through the broker (SLUICE_BROKER_URL) end to end, on the test servers' nats-server
 * with JetStream: a runtime and its worker, the webhook stub as the provider. Due messages are
 * handed off (SQL marks them, a job per message on the deliver stream) and sent by the channel's
 * consumer; retries wait in the broker or go back through the due index; a send waiting for its
 * pace keeps its job past the ack wait; the last delivery of a job fails its message; every
 * status change reaches the events stream with the webhook's body.
 */
import { afterEach, expect, it } from 'vitest';
import { DELIVERY_LIMIT_ERROR } from '../../src/delivery/attempt.js';
import { deliveryDeps } from '../../src/main/worker.js';
import { describeWith, servers } from '../support/servers.js';
import {
  type BrokerFixture,
  brokerFixture,
  busEvents,
  deliverStreamMessages,
  metricValue,
  sendMessages,
  stubTenant,
} from './broker-support.js';
import { countFinal, loadMessages, waitFor } from './delivery-support.js';

const natsUrl = servers.natsUrl as string;
const redisUrl = servers.redisUrl as string;

describeWith(natsUrl && redisUrl, 'SLUICE_TEST_NATS_URL and SLUICE_TEST_REDIS_URL', 'delivery through the broker', () => {
  const fixtures: BrokerFixture[] = [];
  const fixture = async (...args: Parameters<typeof brokerFixture>) => {
    const made = await brokerFixture(...args);
    fixtures.push(made);
    return made;
  };

  afterEach(async () => {
    for (const made of fixtures.splice(0)) await made.close();
  });

  for (const mode of ['Redis due index', 'embedded due query'] as const) {
    it(`${mode}: hands every due message to the broker once, sends each once, and puts every status event on the bus`, async () => {
      const f = await fixture(natsUrl, mode === 'Redis due index' ? { redisUrl } : {});
      // The broker's consumers are the membership: no roster of our own, on either backend.
      expect(f.runtime.backend.broker.kind).toBe('jetstream');
      expect(deliveryDeps(f.runtime, undefined as never, undefined as never).roster).toBeUndefined();
      expect(f.delivery.consumers).toHaveLength(3);
      const tenant = await stubTenant(f, 'flow');
      const now = Date.now();
      const ids = await sendMessages(f.runtime, tenant.apiKey, 200, (i) => (i % 50 === 0 ? { sendAt: now + 1500 } : {}));
      expect(await waitFor(async () => (await countFinal(f.runtime, ids)) === ids.length, 30_000)).toBe(true);
      const messages = await loadMessages(f.runtime, ids);
      for (const id of ids) {
        expect(messages.get(id)?.status).toBe('sent');
        expect(messages.get(id)?.attempts).toBe(1);
        expect(f.stub.arrivals.get(id)).toHaveLength(1);
      }
      // Scheduled ones left at their time, not before.
      for (const id of ids.filter((_, i) => i % 50 === 0)) expect(f.stub.arrivals.get(id)![0]!).toBeGreaterThanOrEqual(now + 1500);
      expect(await metricValue(f.runtime, 'sluice_broker_handoffs_total', { channel: 'webhook' })).toBe(ids.length);

      // Accepted and sent of every message, on `<prefix>.events.<tenantId>.<type>`, de-duplicated by the event id.
      await waitFor(async () => (await f.runtime.repositories.busEvents.count()) === 0, 15_000);
      const events = await busEvents(natsUrl, f.prefix);
      const ofTenant = events.filter((event) => event.subject.startsWith(`${f.prefix}.events.${tenant.id}.`));
      expect(ofTenant).toHaveLength(2 * ids.length);
      for (const event of ofTenant) {
        const body = JSON.parse(event.body) as { id: string; type: string; data: { messageId: string } };
        expect(event.subject).toBe(`${f.prefix}.events.${tenant.id}.${body.type}`);
        expect(event.msgId).toBe(body.id);
      }
      const types = (id: string) => ofTenant.map((event) => JSON.parse(event.body)).filter((body) => body.data.messageId === id);
      expect(types(ids[1]!).map((body) => body.type)).toEqual(['message.accepted', 'message.sent']);
    });
  }

  it('a retry within SLUICE_BROKER_MAX_NAK_DELAY_MS waits in the broker; a longer one goes back through the due index', async () => {
    for (const maxNak of ['60000', '0']) {
      const f = await fixture(natsUrl, { redisUrl, env: { SLUICE_BROKER_MAX_NAK_DELAY_MS: maxNak } });
      const tenant = await stubTenant(f, 'retry');
      let refusals = 0;
      f.stub.answer = () => (refusals++ < 10 ? 503 : 200);
      const ids = await sendMessages(f.runtime, tenant.apiKey, 10);
      expect(await waitFor(async () => (await countFinal(f.runtime, ids)) === ids.length, 30_000)).toBe(true);
      const messages = await loadMessages(f.runtime, ids);
      for (const id of ids) {
        expect(messages.get(id)?.status, maxNak).toBe('sent');
        expect(messages.get(id)?.attempts, maxNak).toBe(2);
      }
      const redelivered = await metricValue(f.runtime, 'sluice_broker_redeliveries_total');
      const handoffs = await metricValue(f.runtime, 'sluice_broker_handoffs_total');
      // Nak'ed: each retry a redelivery of its job. Through the due index: a second hand-off, a new job (attempt 1).
      if (maxNak === '60000') expect([redelivered, handoffs]).toEqual([10, 10]);
      else expect([redelivered, handoffs]).toEqual([0, 20]);
      await f.close();
      fixtures.splice(fixtures.indexOf(f), 1);
    }
  });

  it('a send waiting for its pace keeps its job past the ack wait: nothing is redelivered, nothing sent twice', async () => {
    const f = await fixture(natsUrl, { redisUrl, env: { SLUICE_BROKER_ACK_WAIT_MS: '1000' } });
    const tenant = await stubTenant(f, 'paced', { qps: 3 });
    const ids = await sendMessages(f.runtime, tenant.apiKey, 12);
    // 12 at 3 a second: the last waits about 3 s for its pace, three ack waits.
    expect(await waitFor(async () => (await countFinal(f.runtime, ids)) === ids.length, 30_000)).toBe(true);
    for (const id of ids) expect(f.stub.arrivals.get(id)).toHaveLength(1);
    expect(await metricValue(f.runtime, 'sluice_broker_redeliveries_total')).toBe(0);
    const arrivals = ids.map((id) => f.stub.arrivals.get(id)![0]!).sort((a, b) => a - b);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(2000);
  });

  it('sends waiting for their pace, more than ten, raise no MaxListenersExceededWarning on the shutdown signal', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const f = await fixture(natsUrl, { redisUrl, env: { SLUICE_SEND_CONCURRENCY: '8', SLUICE_BROKER_HANDOFF_WINDOW: '16' } });
      const tenant = await stubTenant(f, 'crowd', { qps: 1 });
      await sendMessages(f.runtime, tenant.apiKey, 20);
      const inFlight = () => f.delivery.consumers.reduce((sum, consumer) => sum + consumer.inFlight, 0);
      // Pulled (up to twice the concurrency) and waiting for their pace at once: each listens on the consumer's one shutdown signal.
      expect(await waitFor(async () => inFlight() >= 12, 20_000)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('SLUICE_BROKER_EVENTS=false: messages are sent, and no status event is written to the outbox or the bus', async () => {
    const f = await fixture(natsUrl, { redisUrl, env: { SLUICE_BROKER_EVENTS: 'false' } });
    expect(f.delivery.busPublishers).toHaveLength(0);
    const tenant = await stubTenant(f, 'quiet');
    const ids = await sendMessages(f.runtime, tenant.apiKey, 20);
    expect(await waitFor(async () => (await countFinal(f.runtime, ids)) === ids.length, 30_000)).toBe(true);
    expect(await f.runtime.repositories.busEvents.count()).toBe(0);
    expect(await busEvents(natsUrl, f.prefix).catch(() => [])).toEqual([]);
  });

  it('the last delivery of a job fails its message with the reason, and its status event reaches the bus', async () => {
    const f = await fixture(natsUrl, { redisUrl, env: { SLUICE_BROKER_MAX_DELIVER: '2', SLUICE_MAX_ATTEMPTS: '10' } });
    const tenant = await stubTenant(f, 'limit');
    f.stub.answer = () => 503;
    const [id] = await sendMessages(f.runtime, tenant.apiKey, 1);
    expect(await waitFor(async () => (await countFinal(f.runtime, [id!])) === 1, 20_000)).toBe(true);
    const message = (await loadMessages(f.runtime, [id!])).get(id!)!;
    expect(message.status).toBe('failed');
    expect(message.lastError).toMatch(new RegExp(`^${DELIVERY_LIMIT_ERROR}: .*503`));
    expect(message.attempts).toBe(2);
    expect(f.stub.arrivals.get(id!)).toHaveLength(2);
    expect(await metricValue(f.runtime, 'sluice_broker_exhausted_total', { channel: 'webhook' })).toBe(1);
    await waitFor(async () => (await f.runtime.repositories.busEvents.count()) === 0, 15_000);
    const failed = (await busEvents(natsUrl, f.prefix)).find((event) => event.subject === `${f.prefix}.events.${tenant.id}.message.failed`);
    expect(JSON.parse(failed!.body)).toMatchObject({ type: 'message.failed', data: { messageId: id, error: message.lastError } });
    // Nothing left in the deliver stream.
    expect(await deliverStreamMessages(natsUrl, f.prefix)).toBe(0);
  });
});

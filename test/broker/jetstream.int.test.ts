/**
 * The JetStream adapter of the broker port against a real nats-server with JetStream (the shared
 * test server; each broker has a subject and stream prefix of its own): publishing with
 * de-duplication, pulling with ack, nak, working and term, the delivery limit, a handler that
 * fails, a worker killed -9, an operator deleting the stream or the consumer, status events.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dedupIdOf } from '../../src/broker/due-job.js';
import { createJetStreamBroker } from '../../src/broker/jetstream.js';
import { BrokerUnavailableError } from '../../src/broker/port.js';
import { freePort } from '../support/net.js';
import { describeWith, servers } from '../support/servers.js';
import { Brokers, brokerOptions, connected, dueJob, Inbox, operator, Recorder, until } from './support.js';

const url = servers.natsUrl ?? '';

describeWith(servers.natsUrl, 'SLUICE_TEST_NATS_URL', 'JetStream broker adapter', () => {
  const brokers = new Brokers();
  const inboxes: Inbox[] = [];
  let admin: Awaited<ReturnType<typeof operator>>;

  const newInbox = () => {
    const inbox = new Inbox();
    inboxes.push(inbox);
    return inbox;
  };

  beforeAll(async () => {
    admin = await operator(url);
  });

  afterAll(async () => {
    for (const inbox of inboxes) inbox.release();
    await brokers.closeAll(url);
    await admin?.close();
  });

  const streamMessages = async (stream: string) => (await admin.jsm.streams.info(stream)).state.messages;

  describe('publishing', () => {
    it('stores a job once per (message, attempt): the same attempt again is a duplicate, the next attempt is not', async () => {
      const broker = brokers.create(brokerOptions(url));
      const job = dueJob({ partition: 3 });
      await connected(broker);
      expect(await broker.publishDue(job)).toEqual({ duplicate: false });
      expect(await broker.publishDue(job)).toEqual({ duplicate: true });
      expect(await streamMessages(broker.names.deliverStream)).toBe(1);
      expect(await broker.publishDue({ ...job, attempt: 2 })).toEqual({ duplicate: false });
      expect(await streamMessages(broker.names.deliverStream)).toBe(2);
      // Where it went, with what id: the partition's subject, `<messageId>:<attempt>`.
      const stored = await admin.jsm.streams.getMessage(broker.names.deliverStream, { seq: 1 });
      expect(stored?.subject).toBe(`${broker.names.prefix}.deliver.sms.3`);
      expect(stored?.header.get('Nats-Msg-Id')).toBe(dedupIdOf(job));
      expect(stored?.json()).toEqual({ v: 1, ...job });
    });

    it('refuses a job that would make a bad subject or id (a caller bug), before any network call', async () => {
      const broker = brokers.create(brokerOptions(url));
      await expect(broker.publishDue(dueJob({ tenantId: 'a.b' }))).rejects.toThrow(/tenantId must be/);
      await expect(broker.publishDue(dueJob({ partition: -1 }))).rejects.toThrow(/partition must be/);
      await expect(broker.publishEvent({ tenantId: 't>', type: 'message.sent', eventId: 'evt_1', body: '{}' })).rejects.toThrow(TypeError);
    });
  });

  describe('pulling', () => {
    it('hands a job to the channel consumer; an ack removes it from the work queue; another channel is not delivered', async () => {
      const recorder = new Recorder();
      const broker = brokers.create(brokerOptions(url, { observer: recorder.observer }));
      const inbox = newInbox();
      const subscription = broker.consume('sms', inbox.handler, { concurrency: 2 });
      const email = dueJob({ channel: 'email' });
      const sms = dueJob({ channel: 'sms', partition: 1 });
      await connected(broker);
      await broker.publishDue(email);
      await broker.publishDue(sms);
      const delivery = await inbox.next();
      expect(delivery.job).toEqual(sms);
      expect(delivery.deliveryCount).toBe(1);
      expect(delivery.final).toBe(false);
      expect(subscription.inFlight).toBe(1);
      await delivery.ack();
      await until(async () => (await admin.jsm.consumers.info(broker.names.deliverStream, 'deliver-sms')).num_ack_pending === 0);
      // Only the email job is left, for an email consumer nobody runs.
      expect(await streamMessages(broker.names.deliverStream)).toBe(1);
      expect(inbox.pending).toBe(0);
      // Created once each, at first use (the streams at connect, the consumer at the first pull), in whatever order.
      expect(recorder.of('created').sort()).toEqual([
        ['consumer', `${broker.names.deliverStream}/deliver-sms`, false],
        ['stream', broker.names.deliverStream, false],
        ['stream', broker.names.eventsStream, false],
      ]);
      await subscription.stop();
    });

    it('a nak with a delay: the job comes back not before the delay, after a job published later, as a redelivery', async () => {
      const recorder = new Recorder();
      const broker = brokers.create(brokerOptions(url, { observer: recorder.observer }));
      const inbox = newInbox();
      broker.consume('sms', inbox.handler, { concurrency: 1 });
      const first = dueJob();
      const second = dueJob();
      await connected(broker);
      await broker.publishDue(first);
      const delivery = await inbox.next();
      expect(delivery.job.messageId).toBe(first.messageId);
      // Longer than the broker holds is refused and settles nothing.
      await expect(delivery.nak(60_001)).rejects.toThrow(RangeError);
      const nakAt = performance.now();
      await delivery.nak(1500);
      await broker.publishDue(second);
      const next = await inbox.next();
      expect(next.job.messageId).toBe(second.messageId);
      await next.ack();
      const again = await inbox.next();
      const waited = performance.now() - nakAt;
      expect(again.job.messageId).toBe(first.messageId);
      expect(again.deliveryCount).toBe(2);
      expect(waited).toBeGreaterThanOrEqual(1500);
      expect(recorder.of('redelivered')).toEqual([['sms', 2]]);
      await again.ack();
    });

    it('working() keeps a delivery past the ack wait; without it the job goes to another pull', async () => {
      const broker = brokers.create(brokerOptions(url, { ackWaitMs: 1000 }));
      const inbox = newInbox();
      // Two places: a redelivery would arrive while the first is held.
      broker.consume('sms', inbox.handler, { concurrency: 2 });
      const kept = dueJob();
      await connected(broker);
      await broker.publishDue(kept);
      const delivery = await inbox.next();
      // Held for three ack waits, reporting progress every 300 ms.
      const progress = setInterval(() => void delivery.working(), 300);
      const heldFor = new Promise((resolve) => setTimeout(resolve, 3500));
      await heldFor;
      clearInterval(progress);
      expect(inbox.pending).toBe(0);
      const info = await admin.jsm.consumers.info(broker.names.deliverStream, 'deliver-sms');
      expect(info.num_redelivered).toBe(0);
      await delivery.ack();

      // The same hold without working(): redelivered after the ack wait.
      const dropped = dueJob();
      await broker.publishDue(dropped);
      const silent = await inbox.next();
      expect(silent.job.messageId).toBe(dropped.messageId);
      const redelivery = await inbox.next();
      expect(redelivery.job.messageId).toBe(dropped.messageId);
      expect(redelivery.deliveryCount).toBe(2);
      await redelivery.ack();
    });

    it('marks the last delivery final; a term (with its reason) removes the job, and a nak of a final delivery becomes a term', async () => {
      const recorder = new Recorder();
      const broker = brokers.create(brokerOptions(url, { maxDeliver: 3, observer: recorder.observer }));
      const inbox = newInbox();
      broker.consume('sms', inbox.handler, { concurrency: 1 });
      const termed = dueJob();
      const exhausted = dueJob();
      await connected(broker);
      await broker.publishDue(termed);
      await broker.publishDue(exhausted);
      const seen: [string, number, boolean][] = [];
      for (;;) {
        const delivery = await inbox.next();
        seen.push([delivery.job.messageId === termed.messageId ? 'termed' : 'exhausted', delivery.deliveryCount, delivery.final]);
        if (!delivery.final) await delivery.nak(0);
        else if (delivery.job.messageId === termed.messageId) await delivery.term('the provider refused it: invalid number');
        else await delivery.nak(0);
        if (seen.filter(([, , final]) => final).length === 2) break;
      }
      for (const name of ['termed', 'exhausted']) {
        expect(seen.filter(([which]) => which === name).map(([, count, final]) => [count, final])).toEqual([
          [1, false],
          [2, false],
          [3, true],
        ]);
      }
      expect(recorder.of('exhausted')).toEqual([['sms', exhausted]]);
      // Both left the work queue: nothing waits there until the stream's max age.
      await until(async () => (await streamMessages(broker.names.deliverStream)) === 0, 15_000, 'the stream to empty');
      const info = await admin.jsm.consumers.info(broker.names.deliverStream, 'deliver-sms');
      expect([info.num_ack_pending, info.num_pending]).toEqual([0, 0]);
    });

    it('a handler that throws or returns unsettled: the adapter naks it, it comes again, the observer hears of it', async () => {
      const recorder = new Recorder();
      const broker = brokers.create(brokerOptions(url, { ackWaitMs: 1000, observer: recorder.observer }));
      let calls = 0;
      const counts: number[] = [];
      broker.consume(
        'sms',
        async (delivery) => {
          counts.push(delivery.deliveryCount);
          calls++;
          if (calls === 1) throw new Error('database away');
          if (calls === 2) return;
          await delivery.ack();
        },
        { concurrency: 1 },
      );
      const job = dueJob();
      await connected(broker);
      await broker.publishDue(job);
      await until(() => calls === 3, 15_000, 'the third delivery');
      expect(counts).toEqual([1, 2, 3]);
      const failures = recorder.of('handlerFailed');
      expect(failures.map(([channel, failed, error]) => [channel, (failed as typeof job).messageId, (error as Error).message])).toEqual([
        ['sms', job.messageId, 'database away'],
        ['sms', job.messageId, 'the handler returned without settling its delivery'],
      ]);
      await until(async () => (await streamMessages(broker.names.deliverStream)) === 0, 15_000, 'the ack');
    });

    it('a message that is no job (another publisher) is terminated and reported, never handed to the handler', async () => {
      const recorder = new Recorder();
      const broker = brokers.create(brokerOptions(url, { observer: recorder.observer }));
      const inbox = newInbox();
      broker.consume('sms', inbox.handler, { concurrency: 1 });
      await connected(broker);
      await admin.jsm.jetstream().publish(`${broker.names.prefix}.deliver.sms.0`, 'hello');
      const job = dueJob();
      await broker.publishDue(job);
      const delivery = await inbox.next();
      expect(delivery.job).toEqual(job);
      await delivery.ack();
      expect(recorder.of('discarded')).toEqual([['sms', `${broker.names.prefix}.deliver.sms.0: payload is not JSON`]]);
      await until(async () => (await streamMessages(broker.names.deliverStream)) === 0, 15_000, 'the stream to empty');
    });

    it('a worker killed -9 mid-handling: its job is redelivered to another worker', async () => {
      const options = brokerOptions(url, { ackWaitMs: 1000 });
      const broker = brokers.create(options);
      const job = dueJob();
      await connected(broker);
      await broker.publishDue(job);
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', new URL('./consumer-child.ts', import.meta.url).pathname, JSON.stringify(options), 'sms'],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const lines = createInterface({ input: child.stdout! });
      const got = new Promise<string>((resolve) => lines.on('line', (line) => line.startsWith('got ') && resolve(line)));
      try {
        expect(await got).toBe(`got ${job.messageId} 1`);
        // This worker pulls too, but the job is the child's until it dies.
        const inbox = newInbox();
        broker.consume('sms', inbox.handler, { concurrency: 1 });
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
        const delivery = await inbox.next();
        expect(delivery.job).toEqual(job);
        expect(delivery.deliveryCount).toBe(2);
        await delivery.ack();
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    });
  });

  describe('healing', () => {
    it('an operator deletes the stream, then the consumer: both are recreated, publishing and pulling go on', async () => {
      const recorder = new Recorder();
      const broker = brokers.create(brokerOptions(url, { observer: recorder.observer }));
      const inbox = newInbox();
      broker.consume('sms', inbox.handler, { concurrency: 1 });
      const before = dueJob();
      await connected(broker);
      await broker.publishDue(before);
      await (await inbox.next()).ack();
      expect((await broker.health()).ok).toBe(true);

      await admin.jsm.streams.delete(broker.names.deliverStream);
      const after = dueJob();
      expect(await broker.publishDue(after)).toEqual({ duplicate: false });
      const delivery = await inbox.next();
      expect(delivery.job).toEqual(after);
      await delivery.ack();
      expect(recorder.of('created')).toContainEqual(['stream', broker.names.deliverStream, true]);
      expect(recorder.of('created')).toContainEqual(['consumer', `${broker.names.deliverStream}/deliver-sms`, true]);
      expect((await broker.health()).ok).toBe(true);

      await admin.jsm.consumers.delete(broker.names.deliverStream, 'deliver-sms');
      const last = dueJob();
      await broker.publishDue(last);
      const recovered = await inbox.next();
      expect(recovered.job).toEqual(last);
      await recovered.ack();
      expect(recorder.of('created').filter(([resource]) => resource === 'consumer')).toHaveLength(3);
    });

    it('health finds a stream deleted under an idle broker and creates it again (nothing else would, while it is not ready)', async () => {
      const recorder = new Recorder();
      const broker = brokers.create(brokerOptions(url, { observer: recorder.observer }));
      await connected(broker);
      await admin.jsm.streams.delete(broker.names.deliverStream);
      expect(await broker.health()).toEqual({
        ok: true,
        detail: expect.stringMatching(
          new RegExp(`^connected to 127.0.0.1:\\d+; stream ${broker.names.deliverStream} was missing, created again$`),
        ),
      });
      expect(recorder.of('created')).toContainEqual(['stream', broker.names.deliverStream, true]);
      expect(await broker.health()).toEqual({ ok: true, detail: expect.stringMatching(/; stream .* present$/) });
      expect(await broker.publishDue(dueJob())).toEqual({ duplicate: false });
    });

    it('a changed setting brings an existing consumer and stream back to it at the next start', async () => {
      const first = brokers.create(brokerOptions(url, { maxDeliver: 5 }));
      const subscription = first.consume('sms', async () => {}, { concurrency: 1 });
      await connected(first);
      await until(() =>
        admin.jsm.consumers.info(first.names.deliverStream, 'deliver-sms').then(
          () => true,
          () => false,
        ),
      );
      await subscription.stop();
      await first.close();

      const restarted = brokers.create(brokerOptions(url, { prefix: first.names.prefix, maxDeliver: 7, eventsMaxAgeMs: 7_200_000 }));
      restarted.consume('sms', newInbox().handler, { concurrency: 1 });
      await connected(restarted);
      await until(async () => (await admin.jsm.consumers.info(first.names.deliverStream, 'deliver-sms')).config.max_deliver === 7);
      await until(async () => (await admin.jsm.streams.info(first.names.eventsStream)).config.max_age === 7_200_000 * 1e6);
      expect((await admin.jsm.consumers.info(first.names.deliverStream, 'deliver-sms')).config.backoff).toHaveLength(5);
    });

    it('a broker that never answers: publishing fails at once with BrokerUnavailableError, health says why, close returns', async () => {
      const recorder = new Recorder();
      const port = await freePort();
      const broker = createJetStreamBroker(brokerOptions(`nats://127.0.0.1:${port}`, { observer: recorder.observer }));
      await until(() => recorder.of('connection').length > 0, 15_000, 'a connection attempt');
      await expect(broker.publishDue(dueJob())).rejects.toThrow(BrokerUnavailableError);
      expect(recorder.of('publishFailed')).toHaveLength(1);
      expect(recorder.of('connection')[0]?.slice(0, 2)).toEqual(['failed', `nats://127.0.0.1:${port}`]);
      expect(await broker.health()).toMatchObject({
        ok: false,
        detail: expect.stringContaining(`not connected to nats://127.0.0.1:${port}`),
      });
      const subscription = broker.consume('sms', async () => {}, { concurrency: 1 });
      await subscription.stop();
      await broker.close();
      expect(await broker.health()).toEqual({ ok: false, detail: 'closed' });
    });
  });

  describe('status events', () => {
    it('publishes the webhook body to <prefix>.events.<tenantId>.<type> on a limits stream, de-duplicated by event id', async () => {
      const broker = brokers.create(brokerOptions(url, { eventsMaxAgeMs: 7_200_000, eventsMaxBytes: 1024 * 1024 }));
      const body = JSON.stringify({ id: 'evt_01ABC', type: 'message.sent', data: { messageId: '01MSG', status: 'sent' } });
      const event = { tenantId: '01TENANT', type: 'message.sent', eventId: 'evt_01ABC', body };
      await connected(broker);
      await broker.publishEvent(event);
      expect(await broker.publishEvent(event)).toEqual({ duplicate: true });
      const subject = `${broker.names.prefix}.events.01TENANT.message.sent`;
      const stored = await admin.jsm.streams.getMessage(broker.names.eventsStream, { last_by_subj: subject });
      expect(stored?.string()).toBe(body);
      expect(stored?.header.get('Nats-Msg-Id')).toBe('evt_01ABC');
      const info = await admin.jsm.streams.info(broker.names.eventsStream);
      expect(info.config).toMatchObject({
        retention: 'limits',
        max_age: 7_200_000 * 1e6,
        max_bytes: 1024 * 1024,
        subjects: [`${broker.names.prefix}.events.>`],
      });
      expect(info.state.messages).toBe(1);
      // A subscriber to one tenant's events gets them, and nothing of another tenant.
      const sub = admin.nc.subscribe(`${broker.names.prefix}.events.01TENANT.>`);
      await admin.nc.flush();
      await broker.publishEvent({ ...event, tenantId: '01OTHER', eventId: 'evt_01OTHER' });
      await broker.publishEvent({ ...event, type: 'message.failed', eventId: 'evt_01FAILED' });
      for await (const message of sub) {
        expect(message.subject).toBe(`${broker.names.prefix}.events.01TENANT.message.failed`);
        break;
      }
    });
  });
});

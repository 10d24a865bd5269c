/**
 * The JetStream adapter against nats-servers of the test's own: one killed -9 and started again
 * with its store wiped (the adapter reconnects, recreates its stream and consumer, and a job
 * published again from SQL is delivered), seen through the server's monitoring (`/jsz`); one
 * that wants a user and password (from the credentials file, never shown).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { BrokerCredentialsError } from '../../src/broker/connection.js';
import { createJetStreamBroker } from '../../src/broker/jetstream.js';
import { type PrivateNats, privateNatsBin, startPrivateNats } from '../support/private-nats.js';
import { describeWith } from '../support/servers.js';
import { Brokers, brokerOptions, connected, dueJob, Inbox, Recorder, until } from './support.js';

interface Jsz {
  account_details?: {
    stream_detail?: {
      name: string;
      config: { retention: string; subjects: string[] };
      consumer_detail?: { name: string; config: { ack_policy: string; filter_subject: string; max_deliver: number } }[];
    }[];
  }[];
}

describeWith(privateNatsBin, 'SLUICE_TEST_NATS_BIN', 'JetStream broker adapter on private nats-servers', () => {
  const servers: PrivateNats[] = [];
  const brokers = new Brokers();
  const inbox = new Inbox();

  afterAll(async () => {
    inbox.release();
    await brokers.closeAll();
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('a server restarted with its store lost: the adapter reconnects, recreates stream and consumer, and delivers what is published again', async () => {
    const nats = await startPrivateNats();
    servers.push(nats);
    const recorder = new Recorder();
    const broker = brokers.create(brokerOptions(nats.url, { observer: recorder.observer }));
    broker.consume('sms', inbox.handler, { concurrency: 4 });
    await connected(broker);
    const job = dueJob();
    await broker.publishDue(job);
    await (await inbox.next()).ack();

    // The monitoring endpoint shows what the adapter made.
    const jsz = (await (await fetch(`${nats.monitorUrl}/jsz?streams=true&consumers=true&config=true`)).json()) as Jsz;
    const stream = jsz.account_details?.[0]?.stream_detail?.find((detail) => detail.name === broker.names.deliverStream);
    expect(stream?.config).toMatchObject({ retention: 'workqueue', subjects: [`${broker.names.prefix}.deliver.>`] });
    expect(
      stream?.consumer_detail?.map(({ name, config }) => [name, config.ack_policy, config.filter_subject, config.max_deliver]),
    ).toEqual([['deliver-sms', 'explicit', `${broker.names.prefix}.deliver.sms.>`, 5]]);

    // A job accepted but not yet pulled when the server dies with its store.
    const lost = dueJob();
    await nats.kill();
    rmSync(join(nats.storeDir, 'jetstream'), { recursive: true, force: true });
    await nats.restart();
    await connected(broker);
    expect(recorder.of('connection').map(([state]) => state)).toEqual(['connected', 'disconnected', 'reconnected']);

    // SQL still has it unfinished, so it is published again: not a duplicate (the store forgot), delivered.
    expect(await broker.publishDue(lost)).toEqual({ duplicate: false });
    const delivery = await inbox.next();
    expect(delivery.job).toEqual(lost);
    expect(delivery.deliveryCount).toBe(1);
    await delivery.ack();
    expect(recorder.of('created')).toContainEqual(['stream', broker.names.deliverStream, true]);
    expect(recorder.of('created')).toContainEqual(['consumer', `${broker.names.deliverStream}/deliver-sms`, true]);
  });

  it('credentials come from the file, at every connect, and never show in errors, health or observer calls', async () => {
    const password = 'hunter2-broker-password';
    const nats = await startPrivateNats(privateNatsBin, ['--user', 'sluice', '--pass', password]);
    servers.push(nats);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-broker-creds-'));
    try {
      const file = join(dir, 'broker.json');
      const recorder = new Recorder();

      // Without credentials: refused, said so, retried.
      const refused = brokers.create(brokerOptions(nats.url, { observer: recorder.observer }));
      await until(() => recorder.of('connection').length >= 2, 15_000, 'two refused connection attempts');
      expect(recorder.of('connection')[0]?.[0]).toBe('failed');
      expect(String(recorder.of('connection')[0]?.[2])).toMatch(/Authorization Violation/i);
      expect((await refused.health()).ok).toBe(false);

      // A file that is no credentials file: refused at once, without quoting it.
      writeFileSync(file, `user=sluice password=${password}`);
      let thrown: unknown;
      try {
        createJetStreamBroker(brokerOptions(nats.url, { credentialsFile: file }));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(BrokerCredentialsError);
      expect(String(thrown)).toContain(`${file} must be a NATS .creds file or JSON`);
      expect(String(thrown)).not.toContain(password);

      writeFileSync(file, JSON.stringify({ user: 'sluice', password }));
      const broker = brokers.create(brokerOptions(nats.url, { credentialsFile: file, observer: recorder.observer }));
      await connected(broker);
      expect(await broker.publishDue(dueJob())).toEqual({ duplicate: false });
      const health = await broker.health();
      expect(health.ok).toBe(true);

      const shown = JSON.stringify([
        health,
        recorder.calls.map((call) => call.map((value) => (value instanceof Error ? `${value}` : value))),
      ]);
      expect(shown).not.toContain(password);
      expect(broker.servers).toBe(nats.url);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

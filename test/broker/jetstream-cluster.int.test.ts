/**
 * The JetStream adapter on a 3-node JetStream cluster with 3 replicas: the node leading the
 * stream is killed -9; publishing and pulling go on through the others, and a job that was in the
 * stream at the kill is still delivered.
 */
import { afterAll, expect, it } from 'vitest';
import { type PrivateNatsCluster, privateNatsBin, startPrivateNatsCluster } from '../support/private-nats.js';
import { describeWith } from '../support/servers.js';
import { Brokers, brokerOptions, connected, dueJob, Inbox, operator, until } from './support.js';

describeWith(privateNatsBin, 'SLUICE_TEST_NATS_BIN', 'JetStream broker adapter on a 3-node cluster', () => {
  let cluster: PrivateNatsCluster | undefined;
  const brokers = new Brokers();
  const inboxes = [new Inbox(), new Inbox()];

  afterAll(async () => {
    for (const inbox of inboxes) inbox.release();
    await brokers.closeAll();
    await cluster?.stop();
  });

  it('the stream leader killed -9: publishes and pulls go on, and the job it held is delivered', async () => {
    cluster = await startPrivateNatsCluster();
    const [sms, email] = inboxes as [Inbox, Inbox];
    const broker = brokers.create(brokerOptions(cluster.urls[0]!, { servers: cluster.urls, replicas: 3 }));
    broker.consume('sms', sms.handler, { concurrency: 2 });
    await connected(broker);
    const before = dueJob();
    await broker.publishDue(before);
    await (await sms.next()).ack();
    // A job nobody pulls yet: it must survive the leader.
    const held = dueJob({ channel: 'email' });
    await broker.publishDue(held);

    const admin = await operator(cluster.urls.join(','));
    try {
      const leader = (await admin.jsm.streams.info(broker.names.deliverStream)).cluster?.leader;
      expect(cluster.names).toContain(leader);
      await cluster.kill(leader!);

      // While a new leader is elected a publish may fail (delivery keeps the message due and publishes again).
      const after = dueJob();
      await until(
        () =>
          broker.publishDue(after).then(
            () => true,
            () => false,
          ),
        30_000,
        'a publish after the failover',
      );
      const delivery = await sms.next(30_000);
      expect(delivery.job).toEqual(after);
      await delivery.ack();
      const newLeader = (await admin.jsm.streams.info(broker.names.deliverStream)).cluster?.leader;
      expect(newLeader).not.toBe(leader);

      broker.consume('email', email.handler, { concurrency: 1 });
      const survived = await email.next(30_000);
      expect(survived.job).toEqual(held);
      await survived.ack();
    } finally {
      await admin.close();
    }
    // Beyond the cluster's own start deadline (20 s), so a slow start fails there and is stopped.
  }, 60_000);
});

/**
 * A worker for the kill -9 test: consumes a channel with the adapter and, for each delivery,
 * prints `got <messageId> <deliveryCount>` and never settles it (as if killed mid-send).
 * Usage: consumer-child.ts '<JSON of JetStreamBrokerOptions>' <channel>
 */
import { createJetStreamBroker } from '../../src/broker/jetstream.js';
import type { Channel } from '../../src/core/channels.js';

const [options, channel] = process.argv.slice(2);
const broker = createJetStreamBroker(JSON.parse(options!));
broker.consume(
  channel as Channel,
  async (delivery) => {
    console.log(`got ${delivery.job.messageId} ${delivery.deliveryCount}`);
    await new Promise(() => {});
  },
  { concurrency: 1 },
);
console.log('consuming');

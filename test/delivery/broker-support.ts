/**
 * What the broker-mode delivery suites share: a runtime and its worker with SLUICE_BROKER_URL on
 * a prefix of their own (so suites can share one nats-server), reading the status events stream,
 * and dropping the streams afterwards.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { uniquePrefix } from '../broker/support.js';
import {
  addWebhookProvider,
  silentConsole,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
} from './delivery-support.js';

export interface BrokerFixture {
  runtime: Runtime;
  delivery: Delivery;
  stub: WebhookStub;
  prefix: string;
  natsUrl: string;
  /** Stops the worker and the runtime, drops the streams, the stub and the temp folder. */
  close(): Promise<void>;
}

/** A runtime (SQLite, Redis when given) with the broker at `natsUrl` and a started worker. */
export async function brokerFixture(
  natsUrl: string,
  options: { redisUrl?: string; env?: Record<string, string>; stub?: WebhookStub } = {},
): Promise<BrokerFixture> {
  const temp = tempDir();
  const prefix = uniquePrefix();
  const stub = options.stub ?? (await startWebhookStub());
  const env = testEnv(temp.dir, options.redisUrl, {
    SLUICE_BROKER_URL: natsUrl,
    SLUICE_BROKER_PREFIX: prefix,
    SLUICE_LEASE_MS: '1500',
    ...(options.redisUrl ? { SLUICE_REDIS_KEY_PREFIX: `${prefix}:` } : {}),
    ...options.env,
  });
  const runtime = await testRuntime(env);
  const delivery = startWorker(runtime, silentConsole());
  return {
    runtime,
    delivery,
    stub,
    prefix,
    natsUrl,
    async close() {
      await delivery.stop();
      await runtime.close();
      if (!options.stub) await stub.close();
      await dropStreams(natsUrl, prefix).catch(() => undefined);
      temp.cleanup();
    },
  };
}

/** The stream names of a prefix, as the adapter makes them. */
export const streamsOf = (prefix: string) => ({ deliver: `${prefix.toUpperCase()}_DELIVER`, events: `${prefix.toUpperCase()}_EVENTS` });

export async function dropStreams(natsUrl: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsUrl, timeout: 2000 });
  try {
    const jsm = await jetstreamManager(nc);
    for (const stream of Object.values(streamsOf(prefix))) await jsm.streams.delete(stream).catch(() => false);
  } finally {
    await nc.close();
  }
}

/** Jobs in the deliver stream of `prefix` (not yet acked or terminated). */
export async function deliverStreamMessages(natsUrl: string, prefix: string): Promise<number> {
  const nc = await connect({ servers: natsUrl, timeout: 2000 });
  try {
    return (await (await jetstreamManager(nc)).streams.info(streamsOf(prefix).deliver)).state.messages;
  } finally {
    await nc.close();
  }
}

/** Every message on the events stream of `prefix`: its subject and JSON body. */
export async function busEvents(natsUrl: string, prefix: string): Promise<{ subject: string; body: string; msgId: string | undefined }[]> {
  const nc = await connect({ servers: natsUrl, timeout: 2000 });
  try {
    const jsm = await jetstreamManager(nc);
    const stream = streamsOf(prefix).events;
    const { state } = await jsm.streams.info(stream);
    if (state.messages === 0) return [];
    const consumer = await jetstream(nc).consumers.get(stream);
    const found: { subject: string; body: string; msgId: string | undefined }[] = [];
    const batch = await consumer.fetch({ max_messages: state.messages, expires: 5000 });
    for await (const message of batch) {
      found.push({ subject: message.subject, body: message.string(), msgId: message.headers?.get('Nats-Msg-Id') });
      if (found.length >= state.messages) break;
    }
    return found;
  } finally {
    await nc.close();
  }
}

/** A tenant whose webhook channel goes to the stub at `path`. */
export async function stubTenant(
  fixture: Pick<BrokerFixture, 'runtime' | 'stub'>,
  name: string,
  options: { qps?: number; path?: string } = {},
) {
  const tenant = await fixture.runtime.http.tenants.createTenant(`${name}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`);
  await addWebhookProvider(fixture.runtime, tenant.id, `${fixture.stub.url}${options.path ?? `/${name}`}`, {
    name,
    ...(options.qps ? { qps: options.qps } : {}),
  });
  return tenant;
}

/** Accepts `count` messages of the tenant (50 at a time); their ids in order. */
export async function sendMessages(
  runtime: Runtime,
  apiKey: string,
  count: number,
  extra: (i: number) => { sendAt?: number } = () => ({}),
): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 50) {
    const batch = Array.from({ length: Math.min(50, count - start) }, (_, k) =>
      runtime.http.messages.send(apiKey, { channel: 'webhook', to: `to-${start + k}`, body: `hello ${start + k}`, ...extra(start + k) }),
    );
    for (const result of await Promise.all(batch)) ids.push(result.id);
  }
  return ids;
}

/** A metric's value (summed over its series) from the runtime's registry. */
export async function metricValue(runtime: Runtime, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = runtime.metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  return values
    .filter((value) => Object.entries(labels).every(([key, wanted]) => String(value.labels[key]) === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}

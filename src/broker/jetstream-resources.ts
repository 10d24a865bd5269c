/**
 * The JetStream resources of the hand-off, named and configured in one place, and created (or
 * brought back to this configuration) whenever the adapter finds them missing or changed:
 *
 * | resource | name | what |
 * | --- | --- | --- |
 * | stream | `<PREFIX>_DELIVER` | work queue of due jobs, subjects `<prefix>.deliver.<channel>.<partition>`; a job leaves it when acked or terminated |
 * | consumer | `deliver-<channel>` on it | durable pull consumer of one channel (filter `<prefix>.deliver.<channel>.>`), explicit acks |
 * | stream | `<PREFIX>_EVENTS` | status events, subjects `<prefix>.events.<tenantId>.<type>`; limits retention (age, bytes), oldest dropped |
 *
 * Nothing else reads these names: operators find them in docs/operations.md ("Brokers").
 */
import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Channel } from '../core/channels.js';

/** How the resources are configured (the SLUICE_BROKER_* settings, and the adapter's defaults). */
export interface ResourceSettings {
  /** First subject token; upper-cased, the stream names' prefix. */
  prefix: string;
  replicas: number;
  /** The consumers' ack wait; later redeliveries of one job wait 2, 4, 8, 16 times it. */
  ackWaitMs: number;
  maxDeliver: number;
  maxAckPending: number;
  /** Both streams' de-duplication window (`Nats-Msg-Id`). */
  duplicateWindowMs: number;
  /** The longest a job stays in the deliver stream unacked (workers all away): then SQL republishes it. */
  deliverMaxAgeMs: number;
  eventsMaxAgeMs: number;
  eventsMaxBytes: number;
}

export class JetStreamNames {
  readonly deliverStream: string;
  readonly eventsStream: string;

  constructor(readonly prefix: string) {
    const upper = prefix.toUpperCase().replaceAll('-', '_');
    this.deliverStream = `${upper}_DELIVER`;
    this.eventsStream = `${upper}_EVENTS`;
  }

  deliverSubject(channel: Channel, partition: number): string {
    return `${this.prefix}.deliver.${channel}.${partition}`;
  }

  deliverFilter(channel: Channel): string {
    return `${this.prefix}.deliver.${channel}.>`;
  }

  consumer(channel: Channel): string {
    return `deliver-${channel}`;
  }

  /** `type` keeps its dots (`message.sent` is two tokens): subscribe to `<prefix>.events.<tenantId>.>`. */
  eventSubject(tenantId: string, type: string): string {
    return `${this.prefix}.events.${tenantId}.${type}`;
  }
}

const MAX_BACKOFF_STEPS = 5;

/** Redelivery waits of one job after unacked deliveries: ack wait × 1, 2, 4, 8, 16 (fewer than max deliver, as the server requires). */
export function backoffMs(settings: Pick<ResourceSettings, 'ackWaitMs' | 'maxDeliver'>): number[] {
  const steps = Math.min(MAX_BACKOFF_STEPS, settings.maxDeliver - 1);
  return Array.from({ length: steps }, (_, step) => settings.ackWaitMs * 2 ** step);
}

export function deliverStreamConfig(names: JetStreamNames, settings: ResourceSettings): StreamConfig {
  return {
    ...streamBase(settings),
    name: names.deliverStream,
    subjects: [`${names.prefix}.deliver.>`],
    retention: RetentionPolicy.Workqueue,
    max_age: nanos(settings.deliverMaxAgeMs),
    max_bytes: -1,
  } as StreamConfig;
}

export function eventsStreamConfig(names: JetStreamNames, settings: ResourceSettings): StreamConfig {
  return {
    ...streamBase(settings),
    name: names.eventsStream,
    subjects: [`${names.prefix}.events.>`],
    retention: RetentionPolicy.Limits,
    max_age: nanos(settings.eventsMaxAgeMs),
    max_bytes: settings.eventsMaxBytes,
  } as StreamConfig;
}

function streamBase(settings: ResourceSettings): Partial<StreamConfig> {
  return {
    storage: StorageType.File,
    num_replicas: settings.replicas,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(settings.duplicateWindowMs),
  };
}

export function consumerConfig(names: JetStreamNames, channel: Channel, settings: ResourceSettings): Partial<ConsumerConfig> {
  const backoff = backoffMs(settings);
  return {
    durable_name: names.consumer(channel),
    filter_subject: names.deliverFilter(channel),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
    // With a backoff list the server waits backoff[n - 1] after the n-th delivery; its first step is the ack wait.
    ack_wait: nanos(backoff[0] ?? settings.ackWaitMs),
    backoff: backoff.length > 1 ? backoff.map(nanos) : undefined,
    max_deliver: settings.maxDeliver,
    max_ack_pending: settings.maxAckPending,
  };
}

/** The stream fields the adapter manages: one that differs on the server is updated back. */
const MANAGED_STREAM_FIELDS = ['subjects', 'max_age', 'max_bytes', 'num_replicas', 'duplicate_window', 'discard'] as const;
const MANAGED_CONSUMER_FIELDS = ['filter_subject', 'ack_wait', 'backoff', 'max_deliver', 'max_ack_pending'] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export const isStreamNotFound = (error: unknown): boolean =>
  error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
export const isConsumerNotFound = (error: unknown): boolean =>
  error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound;

/** What an ensure did: `created` when the resource was missing. */
export type Ensured = 'present' | 'updated' | 'created';

/** Makes the stream exist with `config`'s managed fields; concurrent callers (other workers) are fine. */
export async function ensureStream(jsm: JetStreamManager, config: StreamConfig): Promise<Ensured> {
  const existing = await jsm.streams.info(config.name).catch((error: unknown) => {
    if (isStreamNotFound(error)) return undefined;
    throw error;
  });
  if (existing === undefined) {
    try {
      await jsm.streams.add(config);
      return 'created';
    } catch (error) {
      // Another worker created it meanwhile: present now, or the error stands.
      await jsm.streams.info(config.name).catch(() => {
        throw error;
      });
      return 'present';
    }
  }
  if (MANAGED_STREAM_FIELDS.every((field) => same(existing.config[field], config[field]))) return 'present';
  await jsm.streams.update(config.name, { ...existing.config, ...pick(config, MANAGED_STREAM_FIELDS) });
  return 'updated';
}

/** Makes the durable consumer exist with `config`'s managed fields; its stream must exist. */
export async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<{ info: ConsumerInfo; ensured: Ensured }> {
  const existing = await jsm.consumers.info(stream, config.durable_name).catch((error: unknown) => {
    if (isConsumerNotFound(error)) return undefined;
    throw error;
  });
  if (existing === undefined) {
    try {
      return { info: await jsm.consumers.add(stream, config), ensured: 'created' };
    } catch (error) {
      const info = await jsm.consumers.info(stream, config.durable_name).catch(() => {
        throw error;
      });
      return { info, ensured: 'present' };
    }
  }
  if (MANAGED_CONSUMER_FIELDS.every((field) => same(existing.config[field], config[field]))) return { info: existing, ensured: 'present' };
  const info = await jsm.consumers.update(stream, config.durable_name, pick(config, MANAGED_CONSUMER_FIELDS));
  return { info, ensured: 'updated' };
}

function pick<T extends object, K extends keyof T>(value: T, fields: readonly K[]): Pick<T, K> {
  return Object.fromEntries(fields.filter((field) => value[field] !== undefined).map((field) => [field, value[field]])) as Pick<T, K>;
}

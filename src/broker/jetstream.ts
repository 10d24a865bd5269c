/**
 * The broker port on NATS JetStream (@nats-io/transport-node, @nats-io/jetstream). Resources and
 * their names: `jetstream-resources.ts`; one channel's pull loop: `jetstream-consumer.ts`.
 *
 * - Connects in the background and keeps reconnecting (to any server of the list); a publish
 *   while disconnected fails at once with {@link BrokerUnavailableError}, a pull waits.
 * - Publishes a due job to `<prefix>.deliver.<channel>.<partition>` with `Nats-Msg-Id` =
 *   `<messageId>:<attempt>`: the stream drops a second publish of it within its duplicate window.
 * - Heals: a publish answered "no stream" creates the stream and publishes again; a pull that
 *   fails attaches again (stream and consumer created if missing); after every reconnect the
 *   pulls re-attach and the streams are ensured, since the server may have lost its store.
 */

import { performance } from 'node:perf_hooks';
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager, type StreamConfig } from '@nats-io/jetstream';
import { type ConnectionOptions, connect, type NatsConnection, NoRespondersError, RequestError } from '@nats-io/transport-node';
import type { Channel } from '../core/channels.js';
import type { Settings } from '../settings/settings.js';
import { connectionOptions, describeServers, serverAtLeast } from './connection.js';
import { dedupIdOf, dueJobProblem, encodeDueJob, SAFE_ID } from './due-job.js';
import { type Attached, ChannelConsumer } from './jetstream-consumer.js';
import {
  backoffMs,
  consumerConfig,
  deliverStreamConfig,
  type Ensured,
  ensureConsumer,
  ensureStream,
  eventsStreamConfig,
  isStreamNotFound,
  JetStreamNames,
  type ResourceSettings,
} from './jetstream-resources.js';
import { isLeaderGap, jitteredPauseMs, PUBLISH_DEADLINE_MS, PUBLISH_TRY_MS, PULL_HEARTBEAT_MS } from './leader-change.js';
import {
  type BrokerHealth,
  type BrokerLimits,
  type BrokerObserver,
  type BrokerSubscription,
  BrokerUnavailableError,
  type ConsumeOptions,
  type DeliveryHandler,
  type DueJob,
  type MessageBroker,
  type PublishReceipt,
  type StatusEvent,
} from './port.js';

export interface JetStreamBrokerOptions extends ResourceSettings {
  /** `nats://host:port` or `tls://host:port`, no credentials (SLUICE_BROKER_URL). */
  servers: readonly string[];
  /** SLUICE_BROKER_CREDENTIALS_FILE: read now (a bad file throws) and at every connect. */
  credentialsFile?: string;
  /** The connection's name in the server's monitoring. */
  name: string;
  maxNakDelayMs: number;
  /** Connect and JetStream API timeout. */
  requestTimeoutMs: number;
  /** One publish try's timeout: a stream without a leader answers nothing (`leader-change.ts`). */
  publishTryMs: number;
  /** How long a publish is tried again through a leader change before it fails. */
  publishDeadlineMs: number;
  /** How long one pull request stays open; a consumer deleted under it is noticed within it. */
  pullExpiresMs: number;
  /** A pull's heartbeat interval: a dead consumer leader is noticed after two missed. */
  pullHeartbeatMs: number;
  observer?: BrokerObserver;
}

const HOUR_MS = 3_600_000;

/** The adapter's options from the settings; `name` tells instances apart in `/connz`. */
export function jetStreamOptionsOf(
  settings: Pick<
    Settings,
    | 'brokerUrl'
    | 'brokerCredentialsFile'
    | 'brokerPrefix'
    | 'brokerReplicas'
    | 'brokerAckWaitMs'
    | 'brokerMaxDeliver'
    | 'brokerMaxAckPending'
    | 'brokerMaxNakDelayMs'
    | 'brokerEventsMaxAgeHours'
    | 'brokerEventsMaxMb'
  >,
  name: string,
  observer?: BrokerObserver,
): JetStreamBrokerOptions {
  return {
    servers: settings.brokerUrl,
    credentialsFile: settings.brokerCredentialsFile || undefined,
    name,
    prefix: settings.brokerPrefix,
    replicas: settings.brokerReplicas,
    ackWaitMs: settings.brokerAckWaitMs,
    maxDeliver: settings.brokerMaxDeliver,
    maxAckPending: settings.brokerMaxAckPending,
    maxNakDelayMs: settings.brokerMaxNakDelayMs,
    // Two minutes, NATS's default: longer than any retry of one publish, shorter than a sweep.
    duplicateWindowMs: 120_000,
    // Past this a job nobody pulled is dropped; SQL still has its row, and it is published again.
    deliverMaxAgeMs: 24 * HOUR_MS,
    eventsMaxAgeMs: settings.brokerEventsMaxAgeHours * HOUR_MS,
    eventsMaxBytes: settings.brokerEventsMaxMb * 1024 * 1024,
    requestTimeoutMs: 5000,
    publishTryMs: PUBLISH_TRY_MS,
    publishDeadlineMs: PUBLISH_DEADLINE_MS,
    pullExpiresMs: 10_000,
    pullHeartbeatMs: PULL_HEARTBEAT_MS,
    observer,
  };
}

/** Starts connecting at once; throws at once only for options that can never work (servers, credentials file). */
export function createJetStreamBroker(options: JetStreamBrokerOptions): JetStreamBroker {
  return new JetStreamBroker(options);
}

/** How long a read of the deliver stream's creation time is reused. */
const LOST_BEFORE_CACHE_MS = 1000;

const EVENT_TYPE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

interface Connected {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** For the ensures of publishes and pulls: an election answers nothing, and they are tried again. */
  quickJsm: JetStreamManager;
}

export class JetStreamBroker implements MessageBroker {
  readonly kind = 'jetstream';
  readonly limits: BrokerLimits;
  /** Where it connects, as logs and `/readyz` show it (credential-free). */
  readonly servers: string;
  readonly names: JetStreamNames;
  private readonly connectOptions: ConnectionOptions;
  private readonly observer: BrokerObserver;
  private connection: Connected | undefined;
  private connected = false;
  private closed = false;
  private lastError: unknown;
  private readonly firstConnect: Promise<void>;
  private endPause: (() => void) | undefined;
  private readonly subscriptions = new Set<ChannelConsumer>();
  /** Resources this process has seen, so a creation after that is a recreation. */
  private readonly seen = new Set<string>();
  /** What {@link jobsLostBefore} last read, when, and the read in progress. */
  private lostBefore = 0;
  private lostBeforeReadAt = Number.NEGATIVE_INFINITY;
  private readingLostBefore: Promise<number> | undefined;
  /** One ensure at a time per resource: many pulls and publishes may find it missing at once. */
  private readonly ensuring = new Map<string, Promise<void>>();

  constructor(private readonly options: JetStreamBrokerOptions) {
    this.connectOptions = connectionOptions({
      servers: options.servers,
      credentialsFile: options.credentialsFile,
      name: options.name,
      timeoutMs: options.requestTimeoutMs,
    });
    this.observer = options.observer ?? {};
    this.servers = describeServers(options.servers);
    this.names = new JetStreamNames(options.prefix);
    this.limits = { maxNakDelayMs: options.maxNakDelayMs, maxDeliver: options.maxDeliver, ackWaitMs: options.ackWaitMs };
    this.firstConnect = this.connectLoop();
  }

  async publishDue(job: DueJob): Promise<PublishReceipt> {
    const problem = dueJobProblem(job);
    if (problem) throw new TypeError(`not a due job: ${problem}`);
    return this.publish('due', this.names.deliverSubject(job.channel, job.partition), encodeDueJob(job), dedupIdOf(job));
  }

  async publishEvent(event: StatusEvent): Promise<PublishReceipt> {
    if (!SAFE_ID.test(event.tenantId) || !SAFE_ID.test(event.eventId) || !EVENT_TYPE.test(event.type)) {
      throw new TypeError('not a status event: tenantId and eventId are A-Z a-z 0-9 _ -, type is dot-separated tokens');
    }
    return this.publish('event', this.names.eventSubject(event.tenantId, event.type), event.body, event.eventId);
  }

  consume(channel: Channel, handler: DeliveryHandler, options: ConsumeOptions): BrokerSubscription {
    if (this.closed) throw new BrokerUnavailableError('the broker connection is closed');
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new RangeError('concurrency must be an integer ≥ 1');
    const backoff = backoffMs(this.options);
    const subscription: ChannelConsumer = new ChannelConsumer({
      channel,
      handler,
      concurrency: options.concurrency,
      attach: () => this.attach(channel),
      pullExpiresMs: this.options.pullExpiresMs,
      pullHeartbeatMs: this.options.pullHeartbeatMs,
      maxNakDelayMs: this.options.maxNakDelayMs,
      redeliveryDelayMs: (count) => backoff[Math.min(count, backoff.length) - 1] ?? this.options.ackWaitMs,
      ackTimeoutMs: this.options.requestTimeoutMs,
      termTakesReason: () => serverAtLeast(this.connection?.nc.info?.version, 2, 11),
      observer: this.observer,
    });
    this.subscriptions.add(subscription);
    return {
      get inFlight() {
        return subscription.inFlight;
      },
      stop: async () => {
        this.subscriptions.delete(subscription);
        await subscription.stop();
      },
    };
  }

  async health(): Promise<BrokerHealth> {
    if (this.closed) return { ok: false, detail: 'closed' };
    const connection = this.connection;
    if (connection === undefined) {
      return { ok: false, detail: `not connected to ${this.servers} yet${this.lastError ? `: ${messageOf(this.lastError)}` : ''}` };
    }
    if (!this.connected) return { ok: false, detail: `disconnected from ${this.servers}; reconnecting` };
    const at = `connected to ${connection.nc.getServer()}`;
    const stream = this.names.deliverStream;
    try {
      await connection.jsm.streams.info(stream);
      return { ok: true, detail: `${at}; stream ${stream} present` };
    } catch (error) {
      if (!isStreamNotFound(error)) return { ok: false, detail: `${at}; JetStream does not answer: ${messageOf(error)}` };
    }
    // Made again here too: an instance kept out of traffic while it is not ready would publish nothing that recreates it.
    try {
      await this.ensure(this.deliverStream());
      return { ok: true, detail: `${at}; stream ${stream} was missing, created again` };
    } catch (error) {
      return { ok: false, detail: `${at}; stream ${stream} missing and not created: ${messageOf(error)}` };
    }
  }

  async jobsLostBefore(): Promise<number> {
    if (performance.now() - this.lostBeforeReadAt < LOST_BEFORE_CACHE_MS) return this.lostBefore;
    this.readingLostBefore ??= this.readLostBefore().finally(() => {
      this.lostBeforeReadAt = performance.now();
      this.readingLostBefore = undefined;
    });
    return this.readingLostBefore;
  }

  /** The deliver stream's creation time (now while it is missing); the last known value when it cannot be read. */
  private async readLostBefore(): Promise<number> {
    try {
      const info = await this.current().jsm.streams.info(this.names.deliverStream);
      this.lostBefore = Math.max(this.lostBefore, Date.parse(info.created) || 0);
    } catch (error) {
      if (isStreamNotFound(error)) this.lostBefore = Math.max(this.lostBefore, Date.now());
    }
    return this.lostBefore;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.endPause?.();
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    this.subscriptions.clear();
    await this.firstConnect;
    const nc = this.connection?.nc;
    if (nc && !nc.isClosed()) await nc.drain().catch(() => nc.close());
  }

  private async connectLoop(): Promise<void> {
    for (let failures = 0; !this.closed; failures++) {
      let nc: NatsConnection;
      try {
        nc = await connect(this.connectOptions);
      } catch (error) {
        this.lastError = error;
        this.observer.connection?.('failed', this.servers, error);
        await this.pause(Math.min(5000, 250 * 2 ** failures));
        continue;
      }
      if (this.closed) {
        await nc.close();
        return;
      }
      const timeout = this.options.requestTimeoutMs;
      const quick = Math.min(timeout, 2 * this.options.publishTryMs);
      this.connection = {
        nc,
        js: jetstream(nc, { timeout }),
        jsm: await jetstreamManager(nc, { timeout, checkAPI: false }),
        quickJsm: await jetstreamManager(nc, { timeout: quick, checkAPI: false }),
      };
      this.connected = true;
      this.observer.connection?.('connected', this.servers);
      void this.watch(nc);
      void this.ensureStreams();
      return;
    }
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        this.observer.connection?.('disconnected', this.servers);
      } else if (status.type === 'reconnect') {
        this.connected = true;
        this.observer.connection?.('reconnected', this.servers);
        for (const subscription of this.subscriptions) subscription.reattach();
        void this.ensureStreams();
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.endPause = done;
    });
  }

  /** The connection, or {@link BrokerUnavailableError} at once: a publish never queues behind a reconnect. */
  private current(): Connected {
    if (this.closed) throw new BrokerUnavailableError('the broker connection is closed');
    if (this.connection === undefined) {
      throw new BrokerUnavailableError(`not connected to ${this.servers}${this.lastError ? `: ${messageOf(this.lastError)}` : ''}`);
    }
    if (!this.connected) throw new BrokerUnavailableError(`disconnected from ${this.servers}; reconnecting`);
    return this.connection;
  }

  /**
   * Publishes, trying again through a leader change: each try waits {@link PUBLISH_TRY_MS} at
   * most, the next follows a jittered pause, until `publishDeadlineMs`. Every try carries the
   * same `Nats-Msg-Id`, so a try the stream took whose answer was lost is a duplicate, not a
   * second job. Disconnected, it fails at once (the caller keeps the message due).
   */
  private async publish(what: 'due' | 'event', subject: string, payload: string, msgID: string): Promise<PublishReceipt> {
    const deadline = performance.now() + this.options.publishDeadlineMs;
    for (let tries = 0; ; tries++) {
      try {
        const { js } = this.current();
        const timeout = Math.max(1, Math.min(this.options.publishTryMs, deadline - performance.now()));
        const send = async () => ({ duplicate: (await js.publish(subject, payload, { msgID, timeout })).duplicate });
        try {
          return await send();
        } catch (error) {
          if (!isNoStream(error)) throw error;
          await this.ensure(what === 'due' ? this.deliverStream() : this.eventsStream());
          return await send();
        }
      } catch (error) {
        const pause = jitteredPauseMs(tries);
        if (!this.closed && !(error instanceof BrokerUnavailableError) && isLeaderGap(error) && performance.now() + pause < deadline) {
          await new Promise((resolve) => setTimeout(resolve, pause));
          continue;
        }
        this.observer.publishFailed?.(what, error);
        if (error instanceof BrokerUnavailableError) throw error;
        throw new BrokerUnavailableError(`publish to ${subject} failed: ${messageOf(error)}`, { cause: error });
      }
    }
  }

  private deliverStream(): StreamConfig {
    return deliverStreamConfig(this.names, this.options);
  }

  private eventsStream(): StreamConfig {
    return eventsStreamConfig(this.names, this.options);
  }

  /** Both streams, at connect and reconnect: a failure (no permission, JetStream away) is only reported; publishes heal later. */
  private async ensureStreams(): Promise<void> {
    for (const config of [this.deliverStream(), this.eventsStream()]) {
      await this.ensure(config).catch((error: unknown) => this.observer.ensureFailed?.('stream', config.name, error));
    }
  }

  /** Ensures a stream, one call at a time per stream; reports a creation. */
  private ensure(config: StreamConfig): Promise<void> {
    const running = this.ensuring.get(config.name);
    if (running) return running;
    const ensuring = (async () => {
      const ensured = await ensureStream(this.current().quickJsm, config);
      this.report('stream', config.name, ensured);
    })().finally(() => this.ensuring.delete(config.name));
    this.ensuring.set(config.name, ensuring);
    return ensuring;
  }

  /** The channel's consumer, with its stream, created if missing; waits for the first connection. */
  private async attach(channel: Channel): Promise<Attached> {
    await this.firstConnect;
    const { js, quickJsm: jsm } = this.current();
    const config = { ...consumerConfig(this.names, channel, this.options), durable_name: this.names.consumer(channel) };
    const ensureIt = () => ensureConsumer(jsm, this.names.deliverStream, config);
    let attached: Awaited<ReturnType<typeof ensureIt>>;
    try {
      attached = await ensureIt();
    } catch (error) {
      if (!isStreamNotFound(error)) throw error;
      await this.ensure(this.deliverStream());
      attached = await ensureIt();
    }
    this.report('consumer', `${this.names.deliverStream}/${config.durable_name}`, attached.ensured);
    return {
      consumer: js.consumers.getConsumerFromInfo(attached.info),
      maxDeliver: attached.info.config.max_deliver ?? this.options.maxDeliver,
    };
  }

  private report(resource: 'stream' | 'consumer', name: string, ensured: Ensured): void {
    if (ensured === 'created') this.observer.created?.(resource, name, this.seen.has(name));
    this.seen.add(name);
  }
}

/** A publish to a subject no stream takes (the stream was deleted, or the server lost its store). */
function isNoStream(error: unknown): boolean {
  // The client names it so (its class is not exported): a request to the stream's subject had no responder.
  if ((error instanceof Error && error.name === 'JetStreamNotEnabled') || isStreamNotFound(error)) return true;
  const cause = (error as { cause?: unknown })?.cause;
  return cause instanceof NoRespondersError || (cause instanceof RequestError && cause.isNoResponders());
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

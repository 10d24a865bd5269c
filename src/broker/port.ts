/**
 * The broker port: how due messages are handed from the due index to whichever worker pulls them,
 * and how status events reach a bus, whatever the broker (NATS JetStream here: `jetstream.ts`; a
 * Kafka adapter maps onto the same calls, docs/operations.md "Brokers").
 *
 * SQL stays the source of truth. A job carries identifiers only ({@link DueJob}); the worker that
 * receives it reads the message from SQL, sends, commits the outcome in SQL, and only then
 * settles the delivery. So everything the broker may do wrong costs a delay, never a message:
 * - a job published twice, or redelivered after its outcome was committed, finds the row
 *   finished and is a no-op (the guarded SQL update refuses it);
 * - a job lost (stream deleted, store lost, never published because the broker was down) is
 *   published again from SQL, whose row is still unfinished.
 * Membership is the broker's: workers join by consuming and leave by stopping; nothing of ours
 * decides who works which partition.
 */
import type { Channel } from '../core/channels.js';

/**
 * One due message, as it travels through the broker: identifiers only. `messageId` + `attempt` +
 * `handedOffAt` is its de-duplication id: one per SQL hand-off (a guarded UPDATE that one
 * dispatcher wins), so publishing the same hand-off again is dropped by the broker within its
 * duplicate window, while a later hand-off of the same attempt (the sweep's, or after a job was
 * handed back) is a new job.
 */
export interface DueJob {
  readonly messageId: string;
  readonly tenantId: string;
  readonly channel: Channel;
  /** The message's dispatcher partition (0 ≤ partition < SLUICE_PARTITIONS): the partition key. */
  readonly partition: number;
  /**
   * Which hand-off of the message this is: its SQL `attempts` when published. A retry that goes
   * back through the due index is published with a higher value, so it is not a duplicate.
   */
  readonly attempt: number;
  /** When the message became due (epoch ms), for lag metrics; the worker still checks SQL. */
  readonly dueAt: number;
  /** When SQL marked this hand-off (epoch ms, the row's `handed_off_at`). */
  readonly handedOffAt: number;
  /** The message's lane: a consumer paces transactional jobs before bulk ones. */
  readonly priority: 'transactional' | 'bulk';
}

/** A status event for the bus: what a webhook carries, for consumers that are not webhooks. */
export interface StatusEvent {
  readonly tenantId: string;
  /** The event type, `message.sent`, ... (docs/api.md, "Status callbacks"). */
  readonly type: string;
  /** The event id (`evt_…`, the webhook's `Sluice-Event-Id`): its de-duplication id. */
  readonly eventId: string;
  /** The JSON body, byte for byte what the webhook posts. */
  readonly body: string;
}

/** What the broker said to a publish. */
export interface PublishReceipt {
  /** The broker already held a job (or event) with this de-duplication id: nothing new was stored. */
  readonly duplicate: boolean;
}

/**
 * One delivery of a job to this worker. The handler settles it exactly once, after committing the
 * outcome in SQL: {@link ack} (done: sent, failed, or nothing left to do), {@link nak} (deliver
 * again after a delay), or {@link term} (never again). Until then it may call {@link working}
 * to keep the delivery (a send waiting for its provider's pace). A second settle is ignored.
 *
 * A delivery the handler leaves unsettled (it threw, or returned without settling) is nak'ed by
 * the adapter with the broker's redelivery delay; one whose worker dies is redelivered once the
 * broker's ack wait runs out. Either way the same job comes again with a higher
 * {@link deliveryCount}.
 */
export interface BrokerDelivery {
  readonly job: DueJob;
  /** 1 on the first delivery of this published job, 2 on its first redelivery, ... */
  readonly deliveryCount: number;
  /**
   * This is the last delivery the broker makes of this job (its delivery limit): the handler must
   * end the message in SQL (`failed`, with the reason, and its status event) unless it sends it
   * now. A nak of a final delivery is turned into a term, since nothing would redeliver it.
   */
  readonly final: boolean;
  /**
   * Done with this job: the broker forgets it. Called after the SQL commit. Resolves once the
   * broker confirmed; rejects if it could not (the job then comes again, and finds its row
   * finished).
   */
  ack(): Promise<void>;
  /**
   * Deliver again, to any worker, not before `delayMs` (0: at once). Each nak counts a delivery
   * toward the limit, so a wait that is not a failure (pacing) uses {@link working} instead.
   * `delayMs` above {@link BrokerLimits.maxNakDelayMs} is refused (RangeError, nothing settled):
   * such a retry goes back through the due index.
   */
  nak(delayMs: number): Promise<void>;
  /** Still on it: the broker's ack wait restarts, so a long send is not redelivered meanwhile. */
  working(): Promise<void>;
  /** Never deliver again (dead-letter it where the broker has such a place). `reason` is for operators. */
  term(reason: string): Promise<void>;
}

/** Called for each delivery; concurrent up to the subscription's concurrency. */
export type DeliveryHandler = (delivery: BrokerDelivery) => Promise<void>;

export interface ConsumeOptions {
  /** Deliveries this worker handles at once for the channel; it pulls no more than it can handle. */
  readonly concurrency: number;
}

/** A worker's pull of one channel's jobs. */
export interface BrokerSubscription {
  /** Deliveries being handled now. */
  readonly inFlight: number;
  /** Stops pulling, then resolves once every delivery in hand was handled (the handlers settle them). */
  stop(): Promise<void>;
}

/** What the broker holds for the caller, so delivery knows when to go back through the due index. */
export interface BrokerLimits {
  /** The longest {@link BrokerDelivery.nak} delay the broker holds a job for. */
  readonly maxNakDelayMs: number;
  /** Deliveries of one published job, the last one {@link BrokerDelivery.final}. */
  readonly maxDeliver: number;
  /**
   * How long a delivery may go without {@link BrokerDelivery.working} (or a settle) before the
   * broker gives it to another worker: a handler reports progress well within it.
   */
  readonly ackWaitMs: number;
}

/** For `/readyz`. */
export interface BrokerHealth {
  readonly ok: boolean;
  /** One line for operators: connected where, what is missing. Never a credential. */
  readonly detail: string;
}

/**
 * The port. An adapter connects by itself and keeps reconnecting; every call made while the
 * broker is away fails fast (publishes reject with {@link BrokerUnavailableError}) or waits
 * (subscriptions resume pulling when it is back). An adapter recreates what it needs (streams,
 * consumers, topics) when it finds them missing, so an operator's deletion or a broker that lost
 * its store costs a delay.
 */
export interface MessageBroker {
  /** Which adapter: `jetstream`. */
  readonly kind: string;
  readonly limits: BrokerLimits;

  /**
   * Stores a due job durably for the workers of its channel; resolves once the broker has it (or
   * already had it: `duplicate`). Rejects with {@link BrokerUnavailableError} when it cannot: the
   * caller keeps the message due (in the due index or in SQL) and publishes it later.
   */
  publishDue(job: DueJob): Promise<PublishReceipt>;

  /**
   * Starts pulling the channel's jobs; `handler` runs for each, at most `concurrency` at once.
   * Any number of workers may consume a channel: the broker spreads the jobs among them, and
   * gives a job whose worker died to another. Returns at once; the pull starts (and restarts
   * after the broker is back) in the background.
   */
  consume(channel: Channel, handler: DeliveryHandler, options: ConsumeOptions): BrokerSubscription;

  /** Publishes a status event; same failure rule as {@link publishDue}. */
  publishEvent(event: StatusEvent): Promise<PublishReceipt>;

  /** Connected, and what the hand-off needs is present. */
  health(): Promise<BrokerHealth>;

  /**
   * Every job published before this time (epoch ms) may be gone: the store holding the due jobs
   * began then (JetStream: the deliver stream's creation time, so a stream an operator deleted or
   * a server that lost its store moves it), or now while the store is missing. Rows SQL says were
   * handed off before it are published again. Read at most about once a second; while the broker
   * is away, the last value known (0 before any).
   */
  jobsLostBefore(): Promise<number>;

  /** Stops every subscription (as {@link BrokerSubscription.stop}) and disconnects. */
  close(): Promise<void>;
}

/** A publish that did not reach the broker (down, unreachable, refused); the message is still due. */
export class BrokerUnavailableError extends Error {
  override name = 'BrokerUnavailableError';
}

/**
 * Callbacks for metrics and logs (the composition root wires them); each optional, each called
 * synchronously and expected not to throw.
 */
export interface BrokerObserver {
  /** A publish failed ({@link BrokerUnavailableError} follows for the caller). */
  publishFailed?(what: 'due' | 'event', error: unknown): void;
  /** A job came again (`deliveryCount` > 1): a nak, or a worker that died or went silent. */
  redelivered?(channel: Channel, deliveryCount: number): void;
  /** A handler threw or left its delivery unsettled; the adapter nak'ed it. */
  handlerFailed?(channel: Channel, job: DueJob, error: unknown): void;
  /** A nak of a final delivery, turned into a term: the message's row is still unfinished in SQL. */
  exhausted?(channel: Channel, job: DueJob): void;
  /** A delivery whose payload is no job (published by something else): terminated. */
  discarded?(channel: Channel, reason: string): void;
  /** Pulling failed (broker away, consumer or stream missing); it is retried after `retryInMs`. */
  consumeFailed?(channel: Channel, error: unknown, retryInMs: number): void;
  /** A stream or consumer was created: at first use, or again after it went missing (`recreated`). */
  created?(resource: 'stream' | 'consumer', name: string, recreated: boolean): void;
  /** A stream could not be checked or created at (re)connect; publishes and pulls try again when they need it. */
  ensureFailed?(resource: 'stream' | 'consumer', name: string, error: unknown): void;
  /**
   * The connection changed: `servers` is credential-free. `failed` comes at every refused attempt
   * before the first connection (every 0.25 to 5 s): throttle a log of it.
   */
  connection?(state: 'connected' | 'disconnected' | 'reconnected' | 'failed', servers: string, error?: unknown): void;
}

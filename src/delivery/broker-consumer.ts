/**
 * Broker mode, the sending side (docs/operations.md, "Brokers"): every worker pulls each channel's
 * jobs (`SLUICE_SEND_CONCURRENCY` in hand), and for each claims its message with the guarded SQL
 * move to `sending` under a lease, runs the attempt (`attempt.ts`: providers, pace, failover),
 * commits the outcome, and only then settles the job. No roster, no lock: the broker spreads the
 * jobs over whoever pulls, and gives a dead worker's jobs to another after its ack wait.
 *
 * | outcome | job |
 * | --- | --- |
 * | sent, failed, or the claim no longer this worker's | ack |
 * | a retry within SLUICE_BROKER_MAX_NAK_DELAY_MS | nak with its delay (the row marked handed off) |
 * | a longer retry | ack; the row goes back through the due index, handed off again when due |
 * | its pace wait cut by a shutdown | nak at once: another worker takes it |
 * | the last delivery (`final`) and a retry due | the message fails: `broker delivery limit reached` |
 *
 * A job whose message it cannot claim: finished or gone, ack (a duplicate, or a redelivery of a
 * committed outcome); `sending` under a live lease elsewhere, nak until that lease ends (ack if
 * final: the holder settles it); pending but not claimable (not due yet, its tenant suspended),
 * a retry that arrived early is nak'ed again, anything else is handed back to the due index.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { BrokerDelivery, BrokerSubscription, MessageBroker } from '../broker/port.js';
import type { Channel } from '../core/channels.js';
import type { Clock } from '../limiter/index.js';
import { FINISHED_STATUSES, type Message } from '../storage/repositories/messages/types.js';
import { type AttemptContext, type AttemptOutcome, runAttempt } from './attempt.js';
import { ClaimLeases } from './claim-leases.js';
import type { DeliveryMessages, DeliveryMetrics } from './ports.js';
import type { ProviderDirectory } from './provider-directory.js';

/** A job for a message another worker sends: looked at again when that lease has ended, plus this. */
const LEASE_MARGIN_MS = 50;

export interface BrokerConsumerOptions {
  channel: Channel;
  broker: Pick<MessageBroker, 'consume' | 'limits'>;
  messages: DeliveryMessages;
  providers: ProviderDirectory;
  clock: Clock;
  logger: Logger;
  metrics?: DeliveryMetrics;
  leaseMs: number;
  concurrency: number;
  retryBaseMs: number;
  retryMaxMs: number;
  random?: () => number;
  /**
   * Puts a pending message back in its partition's due index, due at `dueAt`, and wakes its
   * dispatcher when it runs here (a long retry, a job handed back).
   */
  requeue(message: Message, dueAt: number): Promise<void>;
  /** A job of `partition` was settled here: its room in the hand-off window is free (its dispatcher may run here). */
  onSettled?(partition: number): void;
}

export class BrokerConsumer {
  private subscription: BrokerSubscription | undefined;
  private readonly leases: ClaimLeases;
  private readonly claims: ClaimBatch;
  private readonly attempt: AttemptContext;
  /** Aborted by {@link stop}: cuts the pace waits short. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: BrokerConsumerOptions) {
    const { broker, messages, clock, logger, leaseMs } = options;
    // Every pulled job waiting for its pace listens on this one signal (up to twice
    // SLUICE_SEND_CONCURRENCY of them): above Node's default of 10 it would warn of a leak that is
    // none (each wait removes its listener when it ends).
    setMaxListeners(0, this.stopping.signal);
    // Leases and progress reports both well within their bounds: the SQL lease, and the broker's ack wait.
    this.leases = new ClaimLeases({
      partition: options.channel,
      messages,
      clock,
      logger,
      leaseMs,
      renewEveryMs: Math.min(leaseMs, broker.limits.ackWaitMs) / 3,
    });
    this.claims = new ClaimBatch(messages, clock, leaseMs);
    this.attempt = {
      messages,
      providers: options.providers,
      clock,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      retryBaseMs: options.retryBaseMs,
      retryMaxMs: options.retryMaxMs,
      random: options.random ?? Math.random,
      requeue: options.requeue,
      retryInBroker: (delayMs) => delayMs <= broker.limits.maxNakDelayMs,
    };
  }

  start(): void {
    if (this.subscription) return;
    this.leases.start();
    this.subscription = this.options.broker.consume(this.options.channel, (delivery) => this.handle(delivery), {
      concurrency: this.options.concurrency,
    });
  }

  /** Deliveries being handled now. */
  get inFlight(): number {
    return this.subscription?.inFlight ?? 0;
  }

  /** Stops pulling; the sends waiting for their pace go back to the broker, those in flight finish and settle. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.subscription?.stop();
    this.leases.stop();
  }

  private async handle(delivery: BrokerDelivery): Promise<void> {
    const message = await this.claims.claim(delivery.job.messageId);
    if (!message) return this.notClaimed(delivery);
    const outcome = await this.leases.keepWhile(
      message,
      () => runAttempt(message, this.attempt, this.stopping.signal, { lastDelivery: delivery.final }),
      () => void delivery.working().catch(() => undefined),
    );
    await this.settle(delivery, message, outcome);
    this.options.onSettled?.(delivery.job.partition);
  }

  private async settle(delivery: BrokerDelivery, message: Message, outcome: AttemptOutcome): Promise<void> {
    if (outcome.kind === 'failed' && outcome.deliveryLimit) this.options.metrics?.brokerExhausted.inc({ channel: this.options.channel });
    if (outcome.kind === 'retry' && outcome.inBroker) return delivery.nak(outcome.delayMs);
    if (outcome.kind === 'released') {
      // Nothing was sent: another worker takes it at once (the last delivery cannot be nak'ed: back to the due index).
      if (!delivery.final) return delivery.nak(0);
      await this.handBack(message, this.options.clock.now());
    }
    await delivery.ack();
  }

  /** A job whose message this worker could not claim. */
  private async notClaimed(delivery: BrokerDelivery): Promise<void> {
    const { messages, clock, broker } = this.options;
    const row = await messages.get(delivery.job.messageId);
    if (!row || FINISHED_STATUSES.includes(row.status)) return delivery.ack();
    const now = clock.now();
    const maxNak = broker.limits.maxNakDelayMs;
    if (row.status === 'sending' && (row.leaseUntil ?? 0) > now) {
      // Another worker sends it (a duplicate job); the holder settles it, and if that worker dies this job claims it.
      if (delivery.final) return delivery.ack();
      return delivery.nak(Math.min(maxNak, (row.leaseUntil ?? now) - now + LEASE_MARGIN_MS));
    }
    // A retry the broker held, come back before its due time by the clocks' difference.
    const early = row.dueAt - now;
    if (row.status !== 'sending' && row.handedOffAt !== null && early > 0 && early <= maxNak && !delivery.final) {
      return delivery.nak(early);
    }
    // Not due for a while, its tenant suspended, or the last delivery: the due index hands it off again when it can go.
    if (row.status !== 'sending') await this.handBack(row, Math.max(row.dueAt, now));
    await delivery.ack();
  }

  /** Un-marks a pending message and puts it back in its due index. */
  private async handBack(message: Message, dueAt: number): Promise<void> {
    if (await this.options.messages.handBack(message.id)) await this.options.requeue(message, dueAt).catch(() => undefined);
  }
}

/**
 * The claims of one event-loop turn in one guarded UPDATE (`claimMany`): a pull hands over a batch
 * of jobs at once, and a statement per job cost more than the sends.
 */
class ClaimBatch {
  private waiting = new Map<string, ((message: Message | undefined) => void)[]>();
  private failures = new Map<string, ((error: unknown) => void)[]>();

  constructor(
    private readonly messages: Pick<DeliveryMessages, 'claimMany'>,
    private readonly clock: Clock,
    private readonly leaseMs: number,
  ) {}

  /** The message claimed for this worker, or undefined when it is not claimable now. */
  claim(id: string): Promise<Message | undefined> {
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) setImmediate(() => void this.flush());
      this.waiting.set(id, [...(this.waiting.get(id) ?? []), resolve]);
      this.failures.set(id, [...(this.failures.get(id) ?? []), reject]);
    });
  }

  private async flush(): Promise<void> {
    const waiting = this.waiting;
    const failures = this.failures;
    this.waiting = new Map();
    this.failures = new Map();
    try {
      const claimed = await this.messages.claimMany([...waiting.keys()], { now: this.clock.now(), leaseMs: this.leaseMs });
      const byId = new Map(claimed.map((message) => [message.id, message]));
      // Two jobs of one message in one batch: one claim, the other finds it taken.
      for (const [id, resolvers] of waiting) {
        resolvers.forEach((resolve, i) => {
          resolve(i === 0 ? byId.get(id) : undefined);
        });
      }
    } catch (error) {
      for (const rejecters of failures.values()) for (const reject of rejecters) reject(error);
    }
  }
}

/**
 * One worker's pull of one channel's jobs from JetStream, and the deliveries it hands to the
 * handler. It pulls only what it can handle (at most `concurrency` in hand or requested), so no
 * job waits in this process's buffer while its ack wait runs. When pulling fails (broker away,
 * consumer or stream deleted, server restarted without its store) it asks the adapter to attach
 * again, which recreates what is missing, and retries with a growing pause.
 */
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { NoRespondersError, RequestError } from '@nats-io/transport-node';
import type { Channel } from '../core/channels.js';
import { decodeDueJob } from './due-job.js';
import { isHeartbeatsMissed, jitteredPauseMs } from './leader-change.js';
import {
  type BrokerDelivery,
  type BrokerObserver,
  type BrokerSubscription,
  BrokerUnavailableError,
  type DeliveryHandler,
  type DueJob,
} from './port.js';

/** A consumer ready to pull from, and the delivery limit it has on the server. */
export interface Attached {
  consumer: Consumer;
  maxDeliver: number;
}

export interface ChannelConsumerOptions {
  channel: Channel;
  handler: DeliveryHandler;
  concurrency: number;
  /** Ensures the stream and the channel's consumer (waiting for the connection), and returns it. */
  attach(): Promise<Attached>;
  /** How long one pull request stays open at the server. */
  pullExpiresMs: number;
  /** The pull's heartbeats: two missed end it (a dead consumer leader), and it is sent again. */
  pullHeartbeatMs: number;
  maxNakDelayMs: number;
  /** The wait before redelivering a job its handler left unsettled, by its delivery count. */
  redeliveryDelayMs(deliveryCount: number): number;
  ackTimeoutMs: number;
  /** Whether the server keeps a term's reason (2.11+); older ones ignore a term that carries one. */
  termTakesReason(): boolean;
  observer: BrokerObserver;
}

const RETRY_FIRST_MS = 250;
/** A failed attach (broker away, or an election in progress) is tried again within half a second: cheap, and elections are quick. */
const RETRY_MAX_MS = 500;
/** Pulls ended by missed heartbeats in a row before the consumer is looked up again (attach). */
const SILENT_PULLS_BEFORE_ATTACH = 3;
/** A term reason is one line for operators. */
const MAX_REASON = 256;

export class ChannelConsumer implements BrokerSubscription {
  private running = true;
  private attached: Attached | undefined;
  private batch: ConsumerMessages | undefined;
  private readonly handling = new Set<Promise<void>>();
  private slotFreed: (() => void) | undefined;
  private endPause: (() => void) | undefined;
  private markStopped!: () => void;
  /** Resolves at {@link stop}: an attach waiting for a connection that never comes must not hold the stop. */
  private readonly stopped = new Promise<undefined>((resolve) => {
    this.markStopped = () => resolve(undefined);
  });
  private readonly loop: Promise<void>;

  constructor(private readonly options: ChannelConsumerOptions) {
    this.loop = this.run();
  }

  get inFlight(): number {
    return this.handling.size;
  }

  /** Drops the current pull and attaches again (the connection came back: the server may have lost its store). */
  reattach(): void {
    this.attached = undefined;
    void this.batch?.close();
    this.endPause?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.markStopped();
    void this.batch?.close();
    this.endPause?.();
    this.slotFreed?.();
    await this.loop;
    await Promise.allSettled([...this.handling]);
  }

  private async run(): Promise<void> {
    let failures = 0;
    let silent = 0;
    while (this.running) {
      try {
        while (this.running && this.handling.size >= this.options.concurrency) {
          await new Promise<void>((resolve) => {
            this.slotFreed = resolve;
          });
        }
        if (!this.running) break;
        // Attached after the wait: a delivery settled meanwhile may have found the consumer gone.
        this.attached ??= await Promise.race([this.options.attach(), this.stopped]);
        if (this.attached === undefined) break;
        const { consumer, maxDeliver } = this.attached;
        const batch = await consumer.fetch({
          max_messages: this.options.concurrency - this.handling.size,
          expires: this.options.pullExpiresMs,
          idle_heartbeat: this.options.pullHeartbeatMs,
        });
        this.batch = batch;
        for await (const message of batch) {
          // Pulled as it stopped: at once to another worker, without counting as a failure.
          if (!this.running) message.nak();
          else this.start(message, maxDeliver);
        }
        failures = 0;
        silent = 0;
      } catch (error) {
        if (!this.running) break;
        if (isHeartbeatsMissed(error) && ++silent < SILENT_PULLS_BEFORE_ATTACH) {
          // The consumer's leader died (or the route to it): a new one is elected within seconds,
          // and a pull sent to the consumer reaches it as soon as it is. No attach: its API call
          // would wait out the same election.
          const wait = jitteredPauseMs(silent);
          this.options.observer.consumeFailed?.(this.options.channel, error, wait);
          await this.pause(wait);
          continue;
        }
        silent = 0;
        this.attached = undefined;
        // Half the step and a random part of the rest: workers that lost the same node do not come back in step.
        const step = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** failures++);
        const wait = Math.round(step / 2 + (Math.random() * step) / 2);
        this.options.observer.consumeFailed?.(this.options.channel, error, wait);
        await this.pause(wait);
      } finally {
        this.batch = undefined;
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

  private start(message: JsMsg, maxDeliver: number): void {
    const handled = this.handle(message, maxDeliver)
      // A settle the connection could not carry (closed meanwhile): the broker redelivers the job after its ack wait.
      .catch(() => {})
      .finally(() => {
        this.handling.delete(handled);
        this.slotFreed?.();
        this.slotFreed = undefined;
      });
    this.handling.add(handled);
  }

  private async handle(message: JsMsg, maxDeliver: number): Promise<void> {
    const { channel, observer } = this.options;
    const job = decodeDueJob(message.string(), channel);
    if ('problem' in job) {
      message.term();
      observer.discarded?.(channel, `${message.subject}: ${job.problem}`);
      return;
    }
    const deliveryCount = message.info.deliveryCount;
    if (deliveryCount > 1) observer.redelivered?.(channel, deliveryCount);
    const delivery = new JetStreamDelivery(message, job, deliveryCount, deliveryCount >= maxDeliver, this.options, () => this.reattach());
    let failure: unknown;
    try {
      await this.options.handler(delivery);
    } catch (error) {
      failure = error;
    }
    if (delivery.settled && failure === undefined) return;
    observer.handlerFailed?.(channel, job, failure ?? new Error('the handler returned without settling its delivery'));
    if (!delivery.settled) await delivery.redeliverLater();
  }
}

/** A delivery of one JetStream message; settles it at most once. */
class JetStreamDelivery implements BrokerDelivery {
  settled = false;

  constructor(
    private readonly message: JsMsg,
    readonly job: DueJob,
    readonly deliveryCount: number,
    readonly final: boolean,
    private readonly options: ChannelConsumerOptions,
    /** The ack found no consumer (an operator deleted it, or its stream): pull again, through a new one. */
    private readonly consumerGone: () => void,
  ) {}

  async ack(): Promise<void> {
    if (!this.settle()) return;
    let confirmed: boolean;
    try {
      confirmed = await this.message.ackAck({ timeout: this.options.ackTimeoutMs });
    } catch (error) {
      if (isNoResponders(error)) this.consumerGone();
      throw new BrokerUnavailableError(`the broker did not confirm the ack of ${this.job.messageId}`, { cause: error });
    }
    if (!confirmed) throw new BrokerUnavailableError(`the broker did not confirm the ack of ${this.job.messageId}`);
  }

  async nak(delayMs: number): Promise<void> {
    if (!Number.isFinite(delayMs) || delayMs < 0 || delayMs > this.options.maxNakDelayMs) {
      throw new RangeError(
        `a nak delay is 0 to ${this.options.maxNakDelayMs} ms (got ${delayMs}): a longer retry goes through the due index`,
      );
    }
    this.nakUnchecked(delayMs);
  }

  async working(): Promise<void> {
    if (!this.settled) this.message.working();
  }

  async term(reason: string): Promise<void> {
    if (!this.settle()) return;
    // A 2.9 or 2.10 server does not understand `+TERM <reason>` and keeps redelivering the job.
    if (this.options.termTakesReason()) this.message.term(reason.replace(/\s+/g, ' ').slice(0, MAX_REASON));
    else this.message.term();
  }

  /** The handler left it unsettled: again after the redelivery wait (or never, if this was the last). */
  async redeliverLater(): Promise<void> {
    this.nakUnchecked(Math.min(this.options.maxNakDelayMs, this.options.redeliveryDelayMs(this.deliveryCount)));
  }

  private nakUnchecked(delayMs: number): void {
    if (this.final) {
      // Nothing would redeliver it; left in the stream it would wait there until the stream's max age.
      if (!this.settle()) return;
      this.message.term();
      this.options.observer.exhausted?.(this.options.channel, this.job);
      return;
    }
    if (!this.settle()) return;
    this.message.nak(delayMs);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    return true;
  }
}

/** A request nobody answered: the consumer (or its stream) it was for is gone. */
function isNoResponders(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && depth < 3; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof NoRespondersError || (cause instanceof RequestError && cause.isNoResponders())) return true;
  }
  return false;
}

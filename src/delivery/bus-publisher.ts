/**
 * Broker mode: the status events bus's outbox, published. Every status change writes a
 * `bus_events` row in its own transaction (`storage/repositories/messages/events.ts`); the holder
 * of partition n's lock (`bus-events:<n>`, shard % partitions = n) reads them oldest first,
 * publishes each to `<prefix>.events.<tenantId>.<type>` (de-duplication id: the event id) and
 * deletes what the broker took. A message's events are published one after the other, so they
 * reach the stream in order; a publish the broker refuses stops that message's events for this
 * pass, and the pass is retried within seconds. At least once: a holder that dies between the
 * publish and the delete publishes again, and the broker drops the copy within its duplicate
 * window (consumers dedupe by `id` after it).
 */
import type { Logger } from 'pino';
import type { MessageBroker } from '../broker/port.js';
import type { LeaseLock } from '../infra/lock/index.js';
import { ThrottledLog } from '../infra/throttled-log.js';
import type { Clock } from '../limiter/index.js';
import type { BusEvent } from '../storage/repositories/bus-events.js';
import { PartitionLock } from './partition-lock.js';
import type { BusEventRecords, DeliveryMetrics } from './ports.js';

/** Events read per pass. */
const BATCH = 500;
/** After a failed pass (the broker or the database away): the next after this, doubled per failure up to the max. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 4000;

export interface BusPublisherOptions {
  partition: number;
  partitions: number;
  lock: LeaseLock;
  events: BusEventRecords;
  broker: Pick<MessageBroker, 'publishEvent'>;
  clock: Clock;
  logger: Logger;
  metrics?: Pick<DeliveryMetrics, 'busEventsPublished' | 'lockHeld'>;
  /** Between two looks at an empty outbox. */
  pollMs: number;
  leaseMs: number;
}

export class BusPublisher {
  readonly name: string;
  private readonly lock: PartitionLock;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private failures = 0;
  private readonly errors: ThrottledLog<{ err: unknown; partition: string }>;

  constructor(private readonly options: BusPublisherOptions) {
    this.name = `bus-events:${options.partition}`;
    this.lock = new PartitionLock({
      partition: this.name,
      lock: options.lock,
      clock: options.clock,
      logger: options.logger,
      leaseMs: options.leaseMs,
      onNotHolding: () => options.metrics?.lockHeld.set({ partition: this.name }, 0),
    });
    options.metrics?.lockHeld.set({ partition: this.name }, 0);
    this.errors = new ThrottledLog(
      (fields) => options.logger.warn(fields, 'publishing status events failed; retried within seconds'),
      options.clock,
    );
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops after the pass in progress, then releases the lock. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.passing;
    await this.lock.release();
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.passing = this.pass()
        .then(
          (more) => {
            this.failures = 0;
            return more ? 0 : this.options.pollMs;
          },
          (error: unknown) => {
            this.errors.record({ err: error, partition: this.name });
            return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** this.failures++);
          },
        )
        .then((next) => {
          this.passing = undefined;
          if (this.running) this.schedule(next);
        });
    }, delayMs);
  }

  /** One batch; resolves whether a full batch was published (more may wait). */
  async pass(): Promise<boolean> {
    if ((await this.lock.hold()) === 'none') return false;
    this.options.metrics?.lockHeld.set({ partition: this.name }, 1);
    const { partition, partitions, events, broker, metrics } = this.options;
    const batch = await events.pending({ partition, partitions, limit: BATCH });
    if (batch.length === 0 || !this.lock.isHeld()) return false;
    const chains = new Map<string, BusEvent[]>();
    for (const event of batch) chains.set(event.messageId, [...(chains.get(event.messageId) ?? []), event]);
    const published: string[] = [];
    let failure: unknown;
    await Promise.all(
      [...chains.values()].map(async (chain) => {
        for (const event of chain) {
          try {
            await broker.publishEvent({ tenantId: event.tenantId, type: event.type, eventId: event.eventId, body: event.body });
          } catch (error) {
            failure ??= error;
            return;
          }
          published.push(event.eventId);
        }
      }),
    );
    await events.remove(published);
    metrics?.busEventsPublished.inc(published.length);
    if (failure !== undefined) throw failure;
    return batch.length === BATCH;
  }
}

/**
 * Broker mode, the publishing side of one partition (docs/operations.md, "Brokers"): its
 * dispatcher, holding the partition's lock, takes what is due (from the due index, or the SQL due
 * query) and, instead of sending it, marks it handed off in SQL (one guarded UPDATE per batch)
 * and publishes a job per message. A publish the broker does not take un-marks its message and
 * puts it back in the due index; the tick then fails and is retried within seconds, so due
 * messages wait while the broker is down and leave when it is back.
 *
 * The sweep: a message handed off and still unfinished is published again once its hand-off is
 * older than `republishAfterMs`, or older than the broker's store (`jobsLostBefore`: a stream an
 * operator deleted, a server that lost its store). Its dispatcher looks at the latter on every
 * tick (the adapter reads it at most once a second) and rebuilds at once when it moved.
 */
import type { DueJob, MessageBroker } from '../broker/port.js';
import { BrokerUnavailableError } from '../broker/port.js';
import type { Channel } from '../core/channels.js';
import type { Clock } from '../limiter/index.js';
import type { HandedOff } from '../storage/repositories/messages.js';
import type { DueIndex } from './due-index/index.js';
import type { DeliveryMessages, DeliveryMetrics } from './ports.js';

/**
 * After a tick whose publishes the broker did not take (it is away, or reconnecting after losing
 * a node), the next comes after a pause drawn in [100, 500] ms: not the doubling up to 4 s of a
 * database outage, since a failed publish costs nothing, and a cluster back from an election
 * should have its jobs within a second; drawn at random, so partitions do not retry in step.
 * Undefined for any other failure (the dispatcher's own backoff).
 */
export function brokerRetryMs(error: unknown, random: () => number = Math.random): number | undefined {
  return error instanceof BrokerUnavailableError ? 100 + Math.round(random() * 400) : undefined;
}

/** Messages handed off per claim and UPDATE: the index claim's and the guarded UPDATE's batch. */
export const HAND_OFF_BATCH = 500;

/** The broker as the publishing side uses it. */
export type DuePublisher = Pick<MessageBroker, 'publishDue' | 'jobsLostBefore'>;

export interface HandOffOptions {
  /** The partition's name (`sms:0`) in the due index. */
  partition: string;
  channel: Channel;
  /** The partition's number: the jobs' partition key. */
  index: number;
  broker: DuePublisher;
  messages: Pick<DeliveryMessages, 'returnHandOffs'>;
  /** Absent: the embedded due query (a message un-marked is found by it again). */
  dueIndex?: DueIndex;
  clock: Clock;
  metrics?: Pick<DeliveryMetrics, 'brokerHandoffs'>;
  /** SLUICE_BROKER_REPUBLISH_AFTER_MS: the sweep's bound. */
  republishAfterMs: number;
}

export class HandOff {
  /** The broker store's start last seen: rows handed off before it are republished. */
  private lostBefore = 0;

  constructor(private readonly options: HandOffOptions) {}

  /**
   * Rows handed off before this are taken again at `now`: the sweep's bound, or the start of the
   * broker's store. `moved`: the store began after the one seen before (its jobs are gone).
   */
  async republishBefore(now: number): Promise<{ before: number; moved: boolean }> {
    const lostBefore = await this.options.broker.jobsLostBefore();
    const moved = lostBefore > this.lostBefore;
    this.lostBefore = Math.max(this.lostBefore, lostBefore);
    return { before: Math.max(now - this.options.republishAfterMs, this.lostBefore), moved };
  }

  /**
   * Publishes a job for each of `rows` (marked handed off at `now`). Those the broker did not take
   * are un-marked and put back in the due index, and then this rejects with
   * {@link BrokerUnavailableError}: the tick fails, and is retried within seconds.
   */
  async publish(rows: readonly HandedOff[], now: number): Promise<void> {
    if (rows.length === 0) return;
    const { broker, channel, metrics } = this.options;
    const outcomes = await Promise.allSettled(rows.map((row) => broker.publishDue(jobOf(row, this.options.index, now))));
    const failed: HandedOff[] = [];
    let firstError: unknown;
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') return;
      failed.push(rows[i]!);
      firstError ??= outcome.reason;
    });
    const published = rows.length - failed.length;
    if (published > 0) metrics?.brokerHandoffs.inc({ channel }, published);
    if (failed.length === 0) return;
    await this.options.messages.returnHandOffs(
      failed.map((row) => row.id),
      now,
    );
    await this.options.dueIndex?.addMany(
      this.options.partition,
      failed.map((row) => ({
        id: row.id,
        tenantId: row.tenantId,
        dueAt: Math.min(row.dueAt, now),
        ...(row.priority === 'bulk' ? { priority: 'bulk' as const } : {}),
      })),
    );
    if (firstError instanceof BrokerUnavailableError) throw firstError;
    throw new BrokerUnavailableError(`${failed.length} of ${rows.length} due messages not published`, { cause: firstError });
  }
}

/** The job of a message handed off at `handedOffAt` by partition `partition`: identifiers only, its attempt the claims so far. */
export function jobOf(row: HandedOff, partition: number, handedOffAt: number): DueJob {
  return {
    messageId: row.id,
    tenantId: row.tenantId,
    channel: row.channel,
    partition,
    attempt: row.attempts,
    dueAt: row.dueAt,
    handedOffAt,
    priority: row.priority,
  };
}

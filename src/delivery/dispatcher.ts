/**
 * One dispatcher per channel partition (DESIGN.md §6, docs/operations.md). Every instance runs one
 * for every partition; only the holder of the partition's lease lock works it. Each tick (every
 * `pollMs`; at once when woken for a new immediate message; when the next known message is due,
 * if sooner) the holder claims due messages — through the Redis due index, or the SQL query on
 * (status, due_at) in the embedded default — and runs one attempt of each (`attempt.ts`) in a
 * send slot of its own, its lease renewed while it lasts (`claim-leases.ts`). With a broker
 * (`handOff`) it sends nothing: it hands what is due to the broker (`hand-off.ts`), whose
 * consumers on every worker send (`broker-consumer.ts`).
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Channel } from '../core/channels.js';
import { maxInFlight, type SlotState, sharesOf } from '../core/fair-share.js';
import type { LeaseLock } from '../infra/lock/index.js';
import { outageReason } from '../infra/outage.js';
import { ThrottledLog } from '../infra/throttled-log.js';
import type { Clock } from '../limiter/index.js';
import type { Message } from '../storage/repositories/messages.js';
import { type AttemptContext, runAttempt } from './attempt.js';
import { ClaimLeases } from './claim-leases.js';
import type { DueIndex } from './due-index/index.js';
import { brokerRetryMs, type DuePublisher, HAND_OFF_BATCH, HandOff } from './hand-off.js';
import { type DuePages, IndexRebuild } from './index-rebuild.js';
import { PartitionLock } from './partition-lock.js';
import type { DeliveryMessages, DeliveryMetrics } from './ports.js';
import type { ProviderDirectory } from './provider-directory.js';
import type { PartitionShare } from './roster.js';

export interface DispatcherOptions {
  channel: Channel;
  partition: number;
  partitions: number;
  lock: LeaseLock;
  messages: DeliveryMessages;
  providers: ProviderDirectory;
  /** Redis due index; absent in the embedded default (SQL claim). */
  dueIndex?: DueIndex;
  clock: Clock;
  logger: Logger;
  metrics?: DeliveryMetrics;
  pollMs: number;
  leaseMs: number;
  concurrency: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** How often the due index is rebuilt from SQL while holding the lock; default 60 s. */
  rebuildEveryMs?: number;
  /**
   * This worker's share of the partitions (`roster.ts`, Redis mode): whether the lock may be
   * taken, and when a held one should be given up to a worker below its share. Absent: take the
   * lock whenever it is free (one worker: the embedded default).
   */
  share?: PartitionShare;
  random?: () => number;
  /** The tenants' send weights (1..100, `tenants.send_weight`): their shares of the slots and paces. Absent: 1 each. */
  weights?: () => ReadonlyMap<string, number>;
  /**
   * Broker mode: hand due messages to the broker instead of sending them, `window` of the partition's
   * in the broker at once, shared among the tenants as the send slots are (fair-share.ts).
   */
  handOff?: { broker: DuePublisher; republishAfterMs: number; window: number };
}

/** The shortest sleep between two ticks that were not woken. */
const MIN_SLEEP_MS = 5;
/**
 * After a failed tick (Redis or the database away), the next one comes after this, doubled per
 * failure up to {@link FAILED_TICK_MAX_MS}, not a poll later: a wake sent when Redis came back may
 * arrive before the command connection is back, and a 60 s poll would then hold every due
 * message for a minute. Bounded so an outage costs each dispatcher a call every few seconds.
 */
const FAILED_TICK_RETRY_MS = 250;
const FAILED_TICK_MAX_MS = 4000;

/**
 * Broker mode: while a tenant's due messages wait for room in the hand-off window, the dispatcher
 * looks again this often (a consumer on this worker wakes it sooner: {@link Dispatcher.jobSettled}).
 */
const HAND_OFF_RECHECK_MS = 50;

/** `sms:0`: the name of a partition in locks, the due index and metrics. */
export const partitionName = (channel: Channel, partition: number) => `${channel}:${partition}`;

export class Dispatcher {
  readonly name: string;
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (epoch ms, this dispatcher's clock); Infinity with no timer. */
  private timerAt = Number.POSITIVE_INFINITY;
  private running = false;
  private ticking: Promise<void> | undefined;
  /** A wake asked for during a tick: the next tick runs no later than this (epoch ms). */
  private wakeAt = Number.POSITIVE_INFINITY;
  /** The send slots in use: one attempt each, held until its outcome is committed. */
  private readonly inFlight = new Set<Promise<void>>();
  /** The slots each tenant holds (its share: `core/fair-share.ts`). */
  private readonly heldBy = new Map<string, number>();
  /** The tenant served last: the next claim's round-robin starts after it. */
  private lastServed: string | undefined;
  /** Broker mode: due messages wait for room in the hand-off window. */
  private handOffHeldBack = false;
  /** Broker mode: jobs of this partition finished on this worker since the last hand-off. */
  private settledSinceHandOff = 0;
  private readonly lock: PartitionLock;
  private readonly leases: ClaimLeases;
  /** Present with a due index. */
  private readonly rebuilds: IndexRebuild | undefined;
  private readonly attempt: AttemptContext;
  /** Present in broker mode. */
  private readonly handOff: HandOff | undefined;
  /** Broker mode: rows handed off before this are the sweep's (set at each rebuild or sweep). */
  private republishBefore = Number.NEGATIVE_INFINITY;
  /** When the embedded due query last looked for expired leases. */
  private lastExpiredCheck = Number.NEGATIVE_INFINITY;
  /** A tick failing for a dependency away (warn, in sluice's words) or for anything else (error, with the stack). */
  private readonly tickOutages: ThrottledLog<{ partition: string; reason: string }>;
  private readonly tickErrors: ThrottledLog<{ err: unknown; partition: string }>;
  /** Ticks failed in a row: the retry's backoff. */
  private failedTicks = 0;
  /** Aborted by {@link stop}: cuts the pace waits short. */
  private stopping = new AbortController();

  constructor(private readonly options: DispatcherOptions) {
    const { clock, logger, metrics, dueIndex } = options;
    this.name = partitionName(options.channel, options.partition);
    // Exported from the start: summed over instances `sluice_lock_held` is 1 per partition only if
    // every instance reports its 0 too. The backlog is the holder's to report.
    metrics?.lockHeld.set({ partition: this.name }, 0);
    this.tickOutages = new ThrottledLog<{ partition: string; reason: string }>(
      (fields) => logger.warn(fields, `dispatcher paused: ${fields.reason}; tried again within seconds`),
      clock,
    );
    this.tickErrors = new ThrottledLog<{ err: unknown; partition: string }>(
      (fields) => logger.error(fields, 'dispatcher tick failed; retried within seconds'),
      clock,
    );
    this.lock = new PartitionLock({
      partition: this.name,
      lock: options.lock,
      ...(options.share ? { share: options.share } : {}),
      clock,
      logger,
      leaseMs: options.leaseMs,
      onNotHolding: () => {
        metrics?.lockHeld.set({ partition: this.name }, 0);
        if (dueIndex) metrics?.dueIndexBacklog.remove({ partition: this.name });
      },
    });
    this.leases = new ClaimLeases({ partition: this.name, messages: options.messages, clock, logger, leaseMs: options.leaseMs });
    const { handOff } = options;
    this.handOff = handOff
      ? new HandOff({
          partition: this.name,
          channel: options.channel,
          index: options.partition,
          broker: handOff.broker,
          messages: options.messages,
          ...(dueIndex ? { dueIndex } : {}),
          clock,
          ...(metrics ? { metrics } : {}),
          republishAfterMs: handOff.republishAfterMs,
        })
      : undefined;
    // Broker mode: the rebuild is the sweep too, so it runs at least once per sweep bound.
    const rebuildEveryMs = options.rebuildEveryMs ?? Math.min(60_000, handOff?.republishAfterMs ?? 60_000);
    this.rebuilds = dueIndex
      ? new IndexRebuild({ partition: this.name, pages: () => this.duePages(), dueIndex, logger, everyMs: rebuildEveryMs })
      : undefined;
    this.attempt = {
      messages: options.messages,
      providers: options.providers,
      clock,
      ...(metrics ? { metrics } : {}),
      retryBaseMs: options.retryBaseMs,
      retryMaxMs: options.retryMaxMs,
      random: options.random ?? Math.random,
      requeue: async (message, dueAt) => {
        await dueIndex?.addMany(this.name, [{ id: message.id, tenantId: message.tenantId, dueAt, priority: message.priority }]);
        this.wakeBy(dueAt);
      },
    };
  }

  /** What a rebuild of the index re-adds from SQL: what is due to send, or in broker mode to hand off (the sweep's rows too). */
  private async duePages(): Promise<DuePages> {
    const { channel, partition, partitions, messages } = this.options;
    const selector = { channel, partition, partitions };
    if (!this.handOff) return (page) => messages.listDueIds({ ...selector, untilMs: Number.MAX_SAFE_INTEGER, ...page });
    const now = this.options.clock.now();
    this.republishBefore = (await this.handOff.republishBefore(now)).before;
    const republishBefore = this.republishBefore;
    return (page) => messages.listHandOffIds({ ...selector, now, republishBefore, ...page });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    // Every send waiting for its pace listens on this one signal (up to SLUICE_SEND_CONCURRENCY of
    // them): above Node's default of 10 it would warn of a leak that is none.
    setMaxListeners(0, this.stopping.signal);
    this.schedule(0);
    this.leases.start();
  }

  /**
   * A message due at `dueAt` was accepted (by any instance: `main/due-feed.ts`) or retried: tick by then
   * if the next tick is later (at once for an immediate message).
   */
  wakeBy(dueAt: number): void {
    if (!this.running) return;
    if (this.ticking) this.wakeAt = Math.min(this.wakeAt, dueAt);
    else if (dueAt < this.timerAt) this.scheduleAt(dueAt);
  }

  /**
   * Messages became claimable that the due index does not hold (a tenant was resumed: its
   * entries left the index while it was suspended): rebuild the index at a tick run now.
   */
  refeed(): void {
    const now = this.options.clock.now();
    this.rebuilds?.requestAt(now);
    this.wakeBy(now);
  }

  /** Whether this dispatcher holds its partition's lock now. */
  holdsLock(): boolean {
    return this.lock.isHeld();
  }

  /**
   * Stops claiming, gives back the claims still waiting for their provider's pace (they go back to
   * the queue: nothing was sent), waits for the sends in flight, releases the lock. A slow pace
   * thus cannot hold a shutdown past the orchestrator's grace period, whose SIGKILL would leave
   * those messages to their leases.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    if (this.inFlight.size > 0) {
      // Paced sends may take a while: say what the shutdown waits for.
      this.options.logger.info({ partition: this.name, sends: this.inFlight.size }, 'stopping: waiting for the sends in flight');
    }
    await Promise.allSettled([...this.inFlight]);
    this.leases.stop();
    await this.lock.release();
  }

  private schedule(delayMs: number): void {
    this.scheduleAt(this.options.clock.now() + delayMs);
  }

  /** Ticks at `at` (epoch ms), or at once if that has passed. */
  private scheduleAt(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.ticking = this.tick()
          .then(
            (nextDue) => {
              this.failedTicks = 0;
              return nextDue;
            },
            (error: unknown) => {
              // Every tick fails alike while Redis or the database is away: one line per 10 s.
              const reason = outageReason(error);
              if (reason === undefined) this.tickErrors.record({ err: error, partition: this.name });
              else this.tickOutages.record({ partition: this.name, reason });
              const retryMs = brokerRetryMs(error) ?? Math.min(FAILED_TICK_MAX_MS, FAILED_TICK_RETRY_MS * 2 ** this.failedTicks++);
              return this.options.clock.now() + retryMs;
            },
          )
          .then((nextDue) => {
            this.ticking = undefined;
            if (!this.running) return;
            const now = this.options.clock.now();
            // The next poll, or sooner: when the next known message is due, a failed tick's retry,
            // or a wake asked for. Not before MIN_SLEEP_MS, so an entry the claim could not take
            // cannot spin the loop.
            const next = Math.min(now + this.options.pollMs, Math.max(now + MIN_SLEEP_MS, nextDue ?? Number.POSITIVE_INFINITY));
            const woken = this.wakeAt;
            this.wakeAt = Number.POSITIVE_INFINITY;
            this.scheduleAt(Math.min(next, woken));
          });
      },
      Math.max(0, at - this.options.clock.now()),
    );
  }

  /**
   * One pass: hold the lock, keep the index whole, claim what is due up to the free send slots.
   * Resolves with when the next known message is due (within a poll), if any: the next tick's time.
   */
  async tick(): Promise<number | undefined> {
    const { dueIndex, metrics } = this.options;
    const held = await this.lock.hold();
    // Not ours (yet): look again within a lease, whatever the poll, so a holder that died (or a
    // key left by a lost answer) hands the partition over in about a lease.
    if (held === 'none') return this.options.clock.now() + this.options.leaseMs;
    if (held === 'taken') this.rebuilds?.onLockTaken();
    metrics?.lockHeld.set({ partition: this.name }, 1);
    if (this.handOff) {
      // The broker's store began anew (its jobs are gone): rebuild now, the sweep taking what it lost.
      if ((await this.handOff.republishBefore(this.options.clock.now())).moved) {
        this.rebuilds?.requestAt(Number.NEGATIVE_INFINITY);
        this.lastExpiredCheck = Number.NEGATIVE_INFINITY;
      }
    }
    await this.rebuilds?.runIfDue(this.options.clock.now());
    this.handOffHeldBack = false;
    if (this.handOff) await this.handOffDue(this.handOff, this.options.handOff?.window ?? 1);
    else await this.sendDue();
    if (dueIndex && metrics) {
      const backlog = await dueIndex.size(this.name, this.options.clock.now());
      // The lock may have gone during the tick: a non-holder reports no backlog.
      if (this.lock.isHeld()) metrics.dueIndexBacklog.set({ partition: this.name }, backlog);
    }
    if (!this.running || !this.lock.isHeld()) return undefined;
    if (this.handOffHeldBack) return this.options.clock.now() + HAND_OFF_RECHECK_MS;
    return this.nextDueAt();
  }

  /**
   * Broker mode: a consumer of this worker finished a job of this partition. Once a quarter of the
   * hand-off window has, the dispatcher hands off more at once instead of at its next look.
   */
  jobSettled(): void {
    const window = this.options.handOff?.window ?? 0;
    if (++this.settledSinceHandOff >= Math.max(1, Math.floor(window / 4)) && this.handOffHeldBack) this.wakeBy(this.options.clock.now());
  }

  /**
   * Claims what is due, shared among the tenants (`core/fair-share.ts`), and runs an attempt of
   * each in its slot. Never waits for a slot: a finished send wakes the next tick, so a tenant
   * that becomes due while every slot is held (a slow endpoint, a silent DNS, a paced backlog of
   * another tenant) is claimed at once, within its share.
   */
  private async sendDue(): Promise<void> {
    while (this.running && this.lock.isHeld()) {
      // Expired leases (a crashed or stuck sender) are looked for once per poll interval, not on
      // every claim of a busy loop, which may last far longer than one tick.
      const expiredLeases = this.options.clock.now() - this.lastExpiredCheck >= this.options.pollMs;
      if (expiredLeases) this.lastExpiredCheck = this.options.clock.now();
      const claimed = await this.claim(expiredLeases);
      if (claimed.length === 0) return;
      for (const message of claimed) {
        this.lastServed = message.tenantId;
        this.track(
          message.tenantId,
          this.leases.keepWhile(message, async () => void (await runAttempt(message, this.attempt, this.stopping.signal))),
        );
      }
    }
  }

  /**
   * The slots as a claim shares them. Under load the free slots are claimed once a quarter of
   * them are free: each claim is a write (shared with the outcomes of the moment, see
   * MessagesRepository), and one per finished send would make many tiny ones. A slot is held
   * until its outcome is committed, so a crash leaves at most `2 · concurrency` messages per
   * dispatcher that reached the provider unrecorded.
   */
  private slots(): SlotState {
    const { concurrency, weights } = this.options;
    return {
      concurrency,
      inFlight: this.heldBy,
      weights: weights?.() ?? new Map(),
      ...(this.lastServed === undefined ? {} : { after: this.lastServed }),
      minFree: this.inFlight.size === 0 ? 1 : Math.max(1, Math.floor(concurrency / 4)),
    };
  }

  /**
   * Broker mode: hands what is due to the broker, a batch at a time, until nothing is (or the lock
   * or a publish fails). Without a due index the SQL due query finds it, the sweep's rows once
   * per poll.
   */
  private async handOffDue(handOff: HandOff, window: number): Promise<void> {
    const { channel, partition, partitions, messages, dueIndex, clock, pollMs, concurrency } = this.options;
    while (this.running && this.lock.isHeld()) {
      const now = clock.now();
      if (dueIndex) {
        // The window is shared as the send slots are: the stream never holds one tenant's backlog
        // in front of another's; what does not fit waits in the due index, in the fair order.
        const outstanding = await messages.outstandingHandOffs({ channel, partition, partitions, republishBefore: this.republishBefore });
        const held = [...outstanding.values()].reduce((sum, n) => sum + n, 0);
        const slots: SlotState = {
          concurrency: window,
          inFlight: outstanding,
          weights: this.options.weights?.() ?? new Map(),
          ...(this.lastServed === undefined ? {} : { after: this.lastServed }),
          minFree: Math.min(Math.max(1, Math.floor(window / 4)), concurrency),
        };
        const ids = await this.claimFromIndex(Math.min(HAND_OFF_BATCH, maxInFlight(window) - held), now, slots);
        if (ids.length === 0) {
          this.handOffHeldBack = (await dueIndex.nextDueAt(this.name, now)) !== undefined;
          return;
        }
        this.settledSinceHandOff = 0;
        const rows = await messages.handOff(ids, { now, republishBefore: this.republishBefore }).catch((error: unknown) => {
          // The ids have left the index but were not marked in SQL.
          this.rebuilds?.requestSoon();
          throw error;
        });
        const last = rows.at(-1);
        if (last) this.lastServed = last.tenantId;
        await handOff.publish(rows, now);
        continue;
      }
      const sweep = now - this.lastExpiredCheck >= pollMs;
      if (sweep) {
        this.lastExpiredCheck = now;
        this.republishBefore = (await handOff.republishBefore(now)).before;
      }
      const rows = await messages.handOffDue({
        channel,
        partition,
        partitions,
        now,
        republishBefore: this.republishBefore,
        limit: HAND_OFF_BATCH,
        sweep,
      });
      if (rows.length === 0) return;
      await handOff.publish(rows, now);
    }
  }

  /** When the next message of the partition is due (to send, or to hand off), if before the next poll. */
  private nextDueAt(): Promise<number | undefined> {
    const { channel, partition, partitions, messages, dueIndex, pollMs } = this.options;
    const until = this.options.clock.now() + pollMs;
    if (dueIndex) return dueIndex.nextDueAt(this.name, until);
    const selector = { channel, partition, partitions, until };
    return this.handOff ? messages.nextHandOffAt(selector) : messages.nextDueAt(selector);
  }

  private track(tenantId: string, work: Promise<void>): void {
    this.heldBy.set(tenantId, (this.heldBy.get(tenantId) ?? 0) + 1);
    const tracked = work
      .catch((error: unknown) => this.options.logger.error({ err: error, partition: this.name }, 'delivery failed unexpectedly'))
      .finally(() => {
        this.inFlight.delete(tracked);
        const held = (this.heldBy.get(tenantId) ?? 1) - 1;
        if (held > 0) this.heldBy.set(tenantId, held);
        else this.heldBy.delete(tenantId);
        // Claim again now, not at the next poll, once a quarter of the slots are free, or once
        // this tenant is owed what a claim would give it (fair-share.ts).
        const { concurrency } = this.options;
        const minFree = Math.max(1, Math.floor(concurrency / 4));
        const share =
          sharesOf([...this.heldBy.keys(), tenantId], { concurrency, weights: this.options.weights?.() ?? new Map() }).get(tenantId) ?? 1;
        if (concurrency - this.inFlight.size >= minFree || share - held >= Math.min(minFree, share)) this.wakeBy(this.options.clock.now());
      });
    this.inFlight.add(tracked);
  }

  /** Up to `limit` ids due at `now` taken out of the due index; with `slots`, shared among the tenants. */
  private async claimFromIndex(limit: number, now: number, slots?: SlotState): Promise<string[]> {
    const started = performance.now();
    try {
      return await (this.options.dueIndex as DueIndex).claim(this.name, now, limit, slots);
    } catch (error) {
      this.options.metrics?.redisErrors.inc({ operation: 'due_claim', kind: 'error' });
      // A claim that timed out here may have run in Redis and removed its ids from the index.
      this.rebuilds?.requestSoon();
      throw error;
    } finally {
      this.options.metrics?.redisCommandDuration.observe({ operation: 'due_claim' }, (performance.now() - started) / 1000);
    }
  }

  /** What is due, shared among the tenants by their slots; `expiredLeases`: also look for expired `sending` rows (embedded mode). */
  private async claim(expiredLeases: boolean): Promise<Message[]> {
    const { channel, partition, partitions, messages, dueIndex, leaseMs, concurrency } = this.options;
    const now = this.options.clock.now();
    const limit = maxInFlight(concurrency) - this.inFlight.size;
    if (limit <= 0) return [];
    const slots = this.slots();
    if (!dueIndex) return messages.claimDue({ channel, partition, partitions, now, leaseMs, limit, expiredLeases, slots });
    const ids = await this.claimFromIndex(limit, now, slots);
    // One guarded UPDATE for the whole batch; it refuses ids that are stale (canceled, already
    // sent, claimed elsewhere), which the index may hold after a rebuild.
    try {
      return await messages.claimMany(ids, { now: this.options.clock.now(), leaseMs });
    } catch (error) {
      // The ids have left the index but were not moved in SQL.
      if (ids.length > 0) this.rebuilds?.requestSoon();
      throw error;
    }
  }
}

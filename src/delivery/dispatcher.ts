/**
 * One dispatcher per channel partition (DESIGN.md §6, docs/operations.md). Every instance runs one
 * for every partition; only the holder of the partition's lease lock works it. Each tick (every
 * `pollMs`; at once when woken for a new immediate message; when the next known message is due,
 * if sooner) the holder claims due messages —
 * through the Redis due index, or the SQL query on (status, due_at) in the embedded default —
 * moves each to `sending` with a guarded update, sends it paced to its provider's QPS, and settles
 * it `sent`, back to `scheduled` for a retry with backoff, or `failed`.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Channel } from '../core/channels.js';
import type { LeaseLock } from '../infra/lock/index.js';
import { ThrottledLog } from '../infra/throttled-log.js';
import type { Clock } from '../limiter/index.js';
import { isProviderError, type OutboundMessage, type Provider } from '../providers/provider.js';
import type { Message, NewDeliveryAttempt } from '../storage/repositories/messages.js';
import type { DueIndex } from './due-index/index.js';
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
}

/** The shortest time between two rebuilds asked for by failed claims. */
const FORCED_REBUILD_GAP_MS = 5000;

/** The shortest sleep between two ticks that were not woken. */
const MIN_SLEEP_MS = 5;

/** `sms:0`: the name of a partition in locks, the due index and metrics. */
export const partitionName = (channel: Channel, partition: number) => `${channel}:${partition}`;

/** Full-jitter exponential backoff: uniform in [0, min(max, base·2^(attempt−1))]. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.max(1, Math.round(ceiling * random()));
}

export class Dispatcher {
  readonly name: string;
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (epoch ms, this dispatcher's clock); Infinity with no timer. */
  private timerAt = Number.POSITIVE_INFINITY;
  private running = false;
  private ticking: Promise<void> | undefined;
  /** A wake asked for during a tick: the next tick runs no later than this (epoch ms). */
  private wakeAt = Number.POSITIVE_INFINITY;
  private readonly inFlight = new Set<Promise<void>>();
  /** The claims being sent (id → fencing token), whose leases {@link renewLeases} keeps from expiring. */
  private readonly sending = new Map<string, number>();
  private renewTimer: NodeJS.Timeout | undefined;
  /** A renewal in progress: the next one waits for it (a slow database must not stack them). */
  private renewing = false;
  private lastRebuild = Number.NEGATIVE_INFINITY;
  /** When a rebuild asked for by a failed claim is due (epoch ms); Infinity: none asked for. */
  private forcedRebuildAt = Number.POSITIVE_INFINITY;
  /** When the embedded due query last looked for expired leases. */
  private lastExpiredCheck = Number.NEGATIVE_INFINITY;
  private readonly random: () => number;
  private readonly tickErrors: ThrottledLog<{ err: unknown; partition: string }>;
  /** After giving the lock up to share the partitions: not taken again before this (epoch ms). */
  private holdOffUntil = Number.NEGATIVE_INFINITY;
  /** Aborted by {@link stop}: cuts the pace waits short. */
  private stopping = new AbortController();

  constructor(private readonly options: DispatcherOptions) {
    this.name = partitionName(options.channel, options.partition);
    this.random = options.random ?? Math.random;
    // Exported from the start: summed over instances `sluice_lock_held` is 1 per partition only if
    // every instance reports its 0 too. The backlog is the holder's to report.
    options.metrics?.lockHeld.set({ partition: this.name }, 0);
    this.tickErrors = new ThrottledLog<{ err: unknown; partition: string }>(
      (fields) => options.logger.error(fields, 'dispatcher tick failed; retried at the next tick'),
      options.clock,
    );
    options.lock.onLost(() => {
      options.share?.held(-1);
      this.notHolding();
      options.logger.warn({ partition: this.name }, 'dispatcher lost its lock: claiming stops');
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    // Every send waiting for its pace listens on this one signal (up to SLUICE_SEND_CONCURRENCY of
    // them): above Node's default of 10 it would warn of a leak that is none.
    setMaxListeners(0, this.stopping.signal);
    this.schedule(0);
    // A pace wait or a slow vendor can outlast one lease; an expired lease is claimed again and
    // sent twice without any crash. Renewed like the lock: every lease/3.
    clearInterval(this.renewTimer);
    this.renewTimer = setInterval(() => void this.renewLeases(), Math.max(1, Math.floor(this.options.leaseMs / 3)));
    this.renewTimer.unref();
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
    this.forcedRebuildAt = now;
    this.wakeBy(now);
  }

  /** Whether this dispatcher holds its partition's lock now. */
  holdsLock(): boolean {
    return this.options.lock.isHeld();
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
    clearInterval(this.renewTimer);
    if (this.options.lock.isHeld()) this.options.share?.held(-1);
    await this.options.lock.release();
    this.notHolding();
  }

  /**
   * More locks held than this worker's share (a worker joined): this one goes to a worker below
   * its share. Claims already made are not disturbed: each message's lease, renewed while it is
   * sent, keeps the next holder from claiming it. Stays off the lock for two leases, so the one it
   * was given to takes it first.
   */
  private async giveUpLock(): Promise<void> {
    this.options.share?.held(-1);
    await this.options.lock.release();
    this.notHolding();
    this.holdOffUntil = this.options.clock.now() + 2 * this.options.leaseMs;
    this.options.logger.info({ partition: this.name }, 'dispatcher gives its partition up to a worker below its share');
  }

  private notHolding(): void {
    this.options.metrics?.lockHeld.set({ partition: this.name }, 0);
    if (this.options.dueIndex) this.options.metrics?.dueIndexBacklog.remove({ partition: this.name });
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
          .catch((error: unknown) => {
            // Every tick fails alike while Redis or the database is away: one line per 10 s.
            this.tickErrors.record({ err: error, partition: this.name });
            return undefined;
          })
          .then((nextDue) => {
            this.ticking = undefined;
            if (!this.running) return;
            const now = this.options.clock.now();
            // The next poll, or sooner: when the next known message is due, or a wake asked for.
            // Not before MIN_SLEEP_MS, so an entry the claim could not take cannot spin the loop.
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
    const { lock, dueIndex, metrics, share } = this.options;
    if (!lock.isHeld()) {
      if (share && (!share.mayTake() || this.options.clock.now() < this.holdOffUntil)) return undefined;
      // Counted before the wait, handed back if not won: a worker's dispatchers tick together, and
      // counting after the wait would let them all pass the check and take every free lock.
      share?.held(1);
      let won = false;
      try {
        won = await lock.tryAcquire();
      } finally {
        if (!won) share?.held(-1);
      }
      if (!won) return undefined;
      this.options.logger.info({ partition: this.name }, 'dispatcher holds its partition');
      this.lastRebuild = Number.NEGATIVE_INFINITY;
    } else if (share?.shouldYield()) {
      await this.giveUpLock();
      return undefined;
    }
    metrics?.lockHeld.set({ partition: this.name }, 1);
    const now = this.options.clock.now();
    const rebuildDue = now - this.lastRebuild >= (this.options.rebuildEveryMs ?? 60_000) || now >= this.forcedRebuildAt;
    if (dueIndex && (rebuildDue || (await dueIndex.needsRebuild(this.name)))) {
      await this.rebuild();
      this.lastRebuild = now;
      this.forcedRebuildAt = Number.POSITIVE_INFINITY;
    }
    // Claim until nothing is due or every send slot is busy; check the lease before each claim.
    // Under load, claim only once a quarter of the slots are free: each claim is a write (shared
    // with the outcomes of the moment, see MessagesRepository), and one per finished send would
    // make many tiny ones. A slot is held until its outcome is committed, so a crash leaves at
    // most `concurrency` messages per dispatcher that reached the provider unrecorded.
    const minClaim = Math.max(1, Math.floor(this.options.concurrency / 4));
    while (this.running && lock.isHeld()) {
      const free = this.options.concurrency - this.inFlight.size;
      if (free <= 0 || (free < minClaim && this.inFlight.size > 0)) {
        await Promise.race(this.inFlight);
        continue;
      }
      // Expired leases (a crashed or stuck sender) are looked for once per poll interval, not on
      // every claim of a busy loop, which may last far longer than one tick.
      const expiredLeases = this.options.clock.now() - this.lastExpiredCheck >= this.options.pollMs;
      if (expiredLeases) this.lastExpiredCheck = this.options.clock.now();
      const claimed = await this.claim(free, expiredLeases);
      if (claimed.length === 0) break;
      for (const message of claimed) {
        this.sending.set(message.id, message.attempts);
        this.track(
          this.deliver(message).finally(() => {
            // Only this claim's entry: a later claim of the same message may have replaced it.
            if (this.sending.get(message.id) === message.attempts) this.sending.delete(message.id);
          }),
        );
      }
    }
    if (dueIndex && metrics) {
      const backlog = await dueIndex.size(this.name, this.options.clock.now());
      // The lock may have gone during the tick: a non-holder reports no backlog (notHolding).
      if (lock.isHeld()) metrics.dueIndexBacklog.set({ partition: this.name }, backlog);
    }
    return this.running && lock.isHeld() ? this.nextDueAt() : undefined;
  }

  /** Extends the leases of the claims being sent. A failure is logged; the next renewal tries again. */
  private async renewLeases(): Promise<void> {
    if (this.sending.size === 0 || this.renewing) return;
    this.renewing = true;
    const claims = [...this.sending].map(([id, attempt]) => ({ id, attempt }));
    try {
      await this.options.messages.extendLeases(claims, { now: this.options.clock.now(), leaseMs: this.options.leaseMs });
    } catch (error) {
      this.options.logger.warn(
        { err: error, partition: this.name, claims: claims.length },
        'renewing the leases of sends in flight failed',
      );
    } finally {
      this.renewing = false;
    }
  }

  /** When the next message of the partition is due, if before the next poll. */
  private nextDueAt(): Promise<number | undefined> {
    const { channel, partition, partitions, messages, dueIndex, pollMs } = this.options;
    const until = this.options.clock.now() + pollMs;
    return dueIndex ? dueIndex.nextDueAt(this.name, until) : messages.nextDueAt({ channel, partition, partitions, until });
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => this.options.logger.error({ err: error, partition: this.name }, 'delivery failed unexpectedly'))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /** `expiredLeases`: also look for expired `sending` rows (embedded mode). */
  private async claim(limit: number, expiredLeases: boolean): Promise<Message[]> {
    const { channel, partition, partitions, messages, dueIndex, leaseMs } = this.options;
    const now = this.options.clock.now();
    if (!dueIndex) return messages.claimDue({ channel, partition, partitions, now, leaseMs, limit, expiredLeases });
    const started = performance.now();
    let ids: string[];
    try {
      ids = await dueIndex.claim(this.name, now, limit);
    } catch (error) {
      this.options.metrics?.redisErrors.inc({ operation: 'due_claim', kind: 'error' });
      // A claim that timed out here may have run in Redis and removed its ids from the index.
      this.rebuildSoon();
      throw error;
    } finally {
      this.options.metrics?.redisCommandDuration.observe({ operation: 'due_claim' }, (performance.now() - started) / 1000);
    }
    // One guarded UPDATE for the whole batch; it refuses ids that are stale (canceled, already
    // sent, claimed elsewhere), which the index may hold after a rebuild.
    try {
      return await messages.claimMany(ids, { now: this.options.clock.now(), leaseMs });
    } catch (error) {
      // The ids have left the index but were not moved in SQL.
      if (ids.length > 0) this.rebuildSoon();
      throw error;
    }
  }

  /**
   * After a claim that may have taken ids out of the index without moving them: rebuild from SQL
   * at the next tick instead of at the minute's rebuild, but not more than once per
   * {@link FORCED_REBUILD_GAP_MS}, or a Redis that stays slow would get a full rebuild every poll.
   */
  private rebuildSoon(): void {
    this.forcedRebuildAt = Math.min(this.forcedRebuildAt, this.lastRebuild + FORCED_REBUILD_GAP_MS);
  }

  /** Re-adds every pending message of the partition from SQL: a flushed Redis loses nothing. */
  private async rebuild(): Promise<void> {
    const { channel, partition, partitions, messages, dueIndex } = this.options;
    if (!dueIndex) return;
    const untilMs = Number.MAX_SAFE_INTEGER;
    async function* entries() {
      let afterId: string | undefined;
      for (;;) {
        const page = await messages.listDueIds({ channel, partition, partitions, untilMs, limit: 1000, ...(afterId ? { afterId } : {}) });
        yield* page;
        if (page.length < 1000) return;
        afterId = page.at(-1)?.id;
      }
    }
    const missing = await dueIndex.rebuild(this.name, entries());
    if (missing > 0) this.options.logger.info({ partition: this.name, missing }, 'due index rebuilt from SQL');
  }

  /** One attempt: the provider for this attempt (failover in priority order), paced, then settle. */
  private async deliver(message: Message): Promise<void> {
    const { messages, providers, metrics, clock } = this.options;
    const attempt = message.attempts;
    const startedAt = clock.now();
    const candidates = await providers.providersFor(message.tenantId, message.channel);
    const provider = candidates[(attempt - 1) % candidates.length];
    const settle = { attempt, now: 0 };
    if (!provider) {
      await messages.markFailed(message.id, { ...settle, now: clock.now(), error: `no provider configured for ${message.channel}` });
      return;
    }
    try {
      await providers.pace(provider, this.stopping.signal);
    } catch (error) {
      if (!this.stopping.signal.aborted) throw error;
      // Stopping: the message never left, so it goes back to the queue with its attempt given back
      // (and to the due index: the partition's next holder also finds it by its rebuild).
      const now = clock.now();
      if (await messages.release(message.id, { attempt, now }))
        await this.options.dueIndex?.add(this.name, message.id, now).catch(() => undefined);
      return;
    }
    const outbound: OutboundMessage = {
      id: message.id,
      tenantId: message.tenantId,
      channel: message.channel,
      to: message.recipient,
      ...(message.payload as Omit<OutboundMessage, 'id' | 'tenantId' | 'channel' | 'to'>),
    };
    const record = (outcome: 'sent' | 'retryable' | 'permanent', error?: string, providerMessageId?: string) => ({
      attemptNo: attempt,
      providerId: provider.id,
      startedAt,
      finishedAt: clock.now(),
      outcome,
      error: error ?? null,
      providerMessageId: providerMessageId ?? null,
    });
    const label = { provider: provider.name ?? provider.id };
    // The vendor's time alone, whatever the outcome (the attempt's own start includes the pace wait).
    const requestStarted = clock.now();
    const requestTime = () => metrics?.providerDuration.observe(label, (clock.now() - requestStarted) / 1000);
    let result: Awaited<ReturnType<Provider['send']>>;
    try {
      result = await provider.send(outbound);
    } catch (error) {
      requestTime();
      await this.settleFailure(message, error, { label, providers: candidates.length }, record);
      return;
    }
    // Outside the try: a failure to record the outcome is not the vendor's, and must not count as one.
    requestTime();
    metrics?.sends.inc({ ...label, outcome: 'sent' });
    await messages.markSent(message.id, {
      attempt,
      now: clock.now(),
      providerId: provider.id,
      providerMessageId: result.providerMessageId,
      record: record('sent', undefined, result.providerMessageId),
    });
  }

  /**
   * A failed send, while attempts remain: a retryable failure goes to the next provider in
   * priority order after the backoff (or the vendor's `Retry-After`): a network outage may be
   * ours and hit every provider alike, so each attempt waits. A failure of the provider itself
   * (`providerFault`: credentials, account, address) goes to a provider this round has not tried
   * at once, since waiting cannot cure it; with none left in the round it is final. Anything else,
   * or no attempt left: `failed`.
   */
  private async settleFailure(
    message: Message,
    error: unknown,
    context: { label: { provider: string }; providers: number },
    record: (outcome: 'retryable' | 'permanent', error: string) => Omit<NewDeliveryAttempt, 'messageId'>,
  ): Promise<void> {
    const { messages, metrics, clock } = this.options;
    const attempt = message.attempts;
    const retryable = isProviderError(error) ? error.retryable : true;
    const text = error instanceof Error ? error.message : String(error);
    metrics?.sends.inc({ ...context.label, outcome: retryable ? 'retryable' : 'permanent' });
    const now = clock.now();
    // Attempt n went to provider (n - 1) mod count: attempt n + 1 goes to an untried one unless n wraps.
    const untriedNext = context.providers > 1 && attempt % context.providers !== 0;
    const providerFault = !retryable && isProviderError(error) && error.providerFault;
    const movesOn = retryable || (providerFault && untriedNext);
    // The attempt row says what this provider answered, even when the message moves on.
    const attemptRow = record(retryable ? 'retryable' : 'permanent', text);
    if (movesOn && attempt < message.maxAttempts) {
      const hinted = isProviderError(error) ? (error.retryAfterMs ?? 0) : 0;
      const dueAt = providerFault
        ? now
        : now + Math.max(hinted, retryDelayMs(attempt, this.options.retryBaseMs, this.options.retryMaxMs, this.random));
      metrics?.retries.inc({ channel: message.channel });
      const moved = await messages.markRetry(message.id, { attempt, now, dueAt, error: text, record: attemptRow });
      if (moved) {
        await this.options.dueIndex?.add(this.name, message.id, dueAt);
        this.wakeBy(dueAt);
      }
    } else {
      await messages.markFailed(message.id, { attempt, now, error: text, record: attemptRow });
    }
  }
}

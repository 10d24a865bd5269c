/**
 * Sharing the partitions among workers (Redis mode). Every worker runs a dispatcher for every
 * partition, and a dispatcher works its partition while it holds the partition's lock; left
 * alone, the first worker to start takes every lock and keeps it, and adding workers adds
 * nothing but standbys.
 *
 * So each worker beats in a roster of live workers (a sorted set in Redis, one script per beat,
 * every lease/3, lapsing after one lease like a lock) and holds at most its fair share,
 * `ceil(partitions / live workers)`:
 * - below it, a dispatcher may take a free lock, as before;
 * - at it, a dispatcher does not take another;
 * - above it (a worker joined), a dispatcher gives its lock up and stays off it for two leases,
 *   so that a worker below its share takes it. Its sends in flight are not disturbed: each
 *   message's own lease, renewed while it is sent, keeps it from being claimed twice.
 * A worker that dies stops beating: within a lease the others' share grows, as its locks lapse.
 * Without Redis there is one worker: the roster is not used.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { LuaScript, type ScriptClient } from '../limiter/index.js';

const heartbeatScript = LuaScript.fromFile(new URL('./scripts/', import.meta.url), 'roster');

/** What a dispatcher asks before it takes or keeps its partition's lock. */
export interface PartitionShare {
  /** Whether one more lock may be taken now. */
  mayTake(): boolean;
  /** Whether a held lock should be given up now (more held than the share). */
  shouldYield(): boolean;
  /** Counts a lock taken (or about to be: `1`), or given up or lost (`-1`). */
  held(delta: 1 | -1): void;
}

export interface WorkerRosterOptions {
  client: ScriptClient;
  keyPrefix: string;
  /** All partitions of all channels this worker runs dispatchers for. */
  partitions: number;
  /** The lock lease: beats every third of it and lapse after it. */
  leaseMs: number;
  logger: Logger;
}

/** A worker's share of one set of partitions among the live workers: the locks it holds, counted. */
class ShareCount implements PartitionShare {
  private holding = 0;

  constructor(
    private readonly partitions: number,
    private readonly workers: () => number,
    private readonly logger: Logger,
  ) {}

  /** The most locks this worker should hold, as of the last beat. */
  share(): number {
    return Math.ceil(this.partitions / Math.max(1, this.workers()));
  }

  mayTake(): boolean {
    return this.holding < this.share();
  }

  shouldYield(): boolean {
    return this.holding > this.share();
  }

  held(delta: 1 | -1): void {
    this.holding += delta;
    // A -1 without its +1 would let this worker take more than its share from then on: say so.
    if (this.holding < 0) {
      this.logger.error({ holding: this.holding }, 'roster: more locks given up than taken; counting from 0');
      this.holding = 0;
    }
  }
}

export class WorkerRoster implements PartitionShare {
  readonly id = randomUUID();
  private readonly key: string;
  private workers = 1;
  private timer: NodeJS.Timeout | undefined;
  private readonly own: ShareCount;

  constructor(private readonly options: WorkerRosterOptions) {
    this.key = `${options.keyPrefix}workers`;
    this.own = new ShareCount(options.partitions, () => this.workers, options.logger);
  }

  /**
   * A share of another set of partitions among the same live workers, counted apart: the webhook
   * event dispatchers' `webhooks:<n>` locks, which would otherwise all go to the first worker.
   */
  shareOf(partitions: number): PartitionShare {
    return new ShareCount(partitions, () => this.workers, this.options.logger);
  }

  /** The first beat (so the share is known before any lock is taken), then one every lease/3. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), Math.max(1, Math.floor(this.options.leaseMs / 3)));
    this.timer.unref();
  }

  /** Stops beating and leaves the roster at once (best effort), so the others' share grows now. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.options.client.eval("return redis.call('ZREM', KEYS[1], ARGV[1])", 1, this.key, this.id).catch(() => undefined);
  }

  /** The most locks this worker should hold, as of the last beat. */
  share(): number {
    return this.own.share();
  }

  mayTake(): boolean {
    return this.own.mayTake();
  }

  shouldYield(): boolean {
    return this.own.shouldYield();
  }

  held(delta: 1 | -1): void {
    this.own.held(delta);
  }

  private async beat(): Promise<void> {
    try {
      const count = Number(await heartbeatScript.run(this.options.client, 1, [this.key, this.id, this.options.leaseMs]));
      if (count !== this.workers)
        this.options.logger.info({ workers: count, share: Math.ceil(this.options.partitions / count) }, 'workers sharing the partitions');
      this.workers = count;
    } catch {
      // Redis away: the locks lapse too, and the last count stands until it is back.
    }
  }
}

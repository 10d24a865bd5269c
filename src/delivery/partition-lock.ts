/**
 * A dispatcher's hold on its partition: the partition's lease lock, taken and kept within this
 * worker's share of the partitions (`roster.ts`). Every lock taken, lost or given up is counted in
 * the share, so a worker's dispatchers together never hold more than it.
 */
import type { Logger } from 'pino';
import type { LeaseLock } from '../infra/lock/index.js';
import type { Clock } from '../limiter/index.js';
import type { PartitionShare } from './roster.js';

export interface PartitionLockOptions {
  /** The partition's name (`sms:0`), for the log. */
  partition: string;
  lock: LeaseLock;
  /** Absent: take the lock whenever it is free (one worker: the embedded default). */
  share?: PartitionShare;
  clock: Clock;
  logger: Logger;
  /** The lock's lease: a lock given up is not taken again for two of them. */
  leaseMs: number;
  /** Called whenever the partition stops being held (lost, given up, released). */
  onNotHolding(): void;
}

/** What {@link PartitionLock.hold} found: held before, taken just now, or not held. */
export type HoldResult = 'kept' | 'taken' | 'none';

export class PartitionLock {
  /** After giving the lock up to share the partitions: not taken again before this (epoch ms). */
  private holdOffUntil = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: PartitionLockOptions) {
    options.lock.onLost(() => {
      options.share?.held(-1);
      options.onNotHolding();
      options.logger.warn({ partition: options.partition }, 'dispatcher lost its lock: claiming stops');
    });
  }

  /** Whether the partition is held now (local, synchronous: `LeaseLock.isHeld`). */
  isHeld(): boolean {
    return this.options.lock.isHeld();
  }

  /**
   * Takes the lock when free and within the share; gives a held one up when above the share (a
   * worker joined). One attempt, never waiting.
   */
  async hold(): Promise<HoldResult> {
    const { lock, share, clock } = this.options;
    if (lock.isHeld()) {
      if (!share?.shouldYield()) return 'kept';
      await this.giveUp();
      return 'none';
    }
    if (share && (!share.mayTake() || clock.now() < this.holdOffUntil)) return 'none';
    // Counted before the wait, handed back if not won: a worker's dispatchers tick together, and
    // counting after the wait would let them all pass the check and take every free lock.
    share?.held(1);
    let won = false;
    try {
      won = await lock.tryAcquire();
    } finally {
      if (!won) share?.held(-1);
    }
    if (!won) return 'none';
    // debug: every dispatcher takes one at every start, which tells an operator nothing.
    this.options.logger.debug({ partition: this.options.partition }, 'dispatcher holds its partition');
    return 'taken';
  }

  /** Gives the lock back (when held) for good: the dispatcher stops. */
  async release(): Promise<void> {
    if (this.options.lock.isHeld()) this.options.share?.held(-1);
    await this.options.lock.release();
    this.options.onNotHolding();
  }

  /**
   * Gives the lock to a worker below its share. Claims already made are not disturbed: each
   * message's lease, renewed while it is sent, keeps the next holder from claiming it. Stays off
   * the lock for two leases, so the one it was given to takes it first.
   */
  private async giveUp(): Promise<void> {
    this.options.share?.held(-1);
    await this.options.lock.release();
    this.options.onNotHolding();
    this.holdOffUntil = this.options.clock.now() + 2 * this.options.leaseMs;
    this.options.logger.info({ partition: this.options.partition }, 'dispatcher gives its partition up to a worker below its share');
  }
}

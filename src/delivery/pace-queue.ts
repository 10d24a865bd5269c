/**
 * The sends of one process waiting for one provider's pace, served in order: transactional before
 * bulk, each lane first come first served. Without it every waiter polled the limiter on its own,
 * and whichever poll landed first won: an OTP claimed behind a bulk backlog could lose round after
 * round to the bulk sends already waiting. The order holds within a process; instances sharing a
 * Redis pace each keep their own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from '../storage/repositories/messages.js';

/** One check of the provider's pace: whether one more send may go now, and if not, when to ask again. */
export type PaceCheck = () => Promise<{ allowed: boolean; retryAfterMs: number }>;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class PaceQueue {
  /** Index 0: transactional; 1: bulk. */
  private readonly lanes: [Waiter[], Waiter[]] = [[], []];
  private serving = false;

  /**
   * `roundSize`: how many waiters one round checks, from the head: the provider's QPS, the most
   * one second can let through (a thousand bulk sends queued for a 10 QPS vendor then cost ten
   * checks a round, not a thousand denied ones).
   */
  constructor(
    private readonly check: PaceCheck,
    private readonly roundSize: () => number = () => Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Resolves when the caller may send; rejects when `signal` aborts the wait or a check fails.
   * With no one waiting the caller checks at once, as if there were no queue (a provider whose
   * pace is not reached costs one check a send); only a denied caller queues.
   */
  async enter(priority: Message['priority'], signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (!this.serving && this.lanes[0].length === 0 && this.lanes[1].length === 0 && (await this.check()).allowed) return;
    return this.wait(priority, signal);
  }

  private wait(priority: Message['priority'], signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const lane = this.lanes[priority === 'bulk' ? 1 : 0];
      const onAbort = () => {
        const at = lane.indexOf(waiter);
        if (at >= 0) lane.splice(at, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      lane.push(waiter);
      // From the next microtask: the waiters of this turn then share the first round.
      if (!this.serving) {
        this.serving = true;
        queueMicrotask(() => void this.serve());
      }
    });
  }

  /**
   * Rounds until no one waits: the first `roundSize()` waiters are checked in one turn, in queue
   * order (the limiter takes one turn's checks as one batch, in order), so the free slots of the
   * moment go to the first in line; the rest wait for the earliest retry the denials named.
   */
  private async serve(): Promise<void> {
    try {
      for (;;) {
        const round = [...this.lanes[0], ...this.lanes[1]].slice(0, Math.max(1, this.roundSize()));
        if (round.length === 0) return;
        const outcomes = await Promise.allSettled(round.map(() => this.check()));
        let retryAfterMs = Number.POSITIVE_INFINITY;
        outcomes.forEach((outcome, i) => {
          const waiter = round[i]!;
          if (outcome.status === 'fulfilled' && !outcome.value.allowed) {
            retryAfterMs = Math.min(retryAfterMs, outcome.value.retryAfterMs);
            return;
          }
          for (const lane of this.lanes) {
            const at = lane.indexOf(waiter);
            if (at >= 0) lane.splice(at, 1);
          }
          if (outcome.status === 'fulfilled') waiter.resolve();
          else waiter.reject(outcome.reason);
        });
        // Unreferenced: waiters that all aborted (a shutdown) must not hold the process open.
        if (Number.isFinite(retryAfterMs)) await sleep(Math.max(1, retryAfterMs), undefined, { ref: false });
      }
    } finally {
      this.serving = false;
    }
  }
}

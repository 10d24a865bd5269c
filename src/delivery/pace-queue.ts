/**
 * The sends of one process waiting for one provider's pace, served in order: transactional before
 * bulk, and within a lane the tenants by weighted round-robin (each in arrival order), so a
 * tenant's backlog on a shared provider never holds another tenant's sends behind it. Without it
 * every waiter polled the limiter on its own, and whichever poll landed first won: an OTP claimed
 * behind a bulk backlog could lose round after round to the bulk sends already waiting. The order
 * holds within a process; instances sharing a Redis pace each keep their own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from '../storage/repositories/messages.js';

/** One check of the provider's pace: whether one more send may go now, and if not, when to ask again. */
export type PaceCheck = () => Promise<{ allowed: boolean; retryAfterMs: number }>;

interface Waiter {
  tenantId: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** One lane's waiters, a queue per tenant, in the order the tenants are served. */
class Lane {
  private readonly queues = new Map<string, Waiter[]>();
  /** The tenant served last: the next round starts after it. */
  private last: string | undefined;

  get size(): number {
    let size = 0;
    for (const queue of this.queues.values()) size += queue.length;
    return size;
  }

  push(waiter: Waiter): void {
    const queue = this.queues.get(waiter.tenantId);
    if (queue) queue.push(waiter);
    else this.queues.set(waiter.tenantId, [waiter]);
  }

  /** Whether `waiter` was here. */
  remove(waiter: Waiter): boolean {
    const queue = this.queues.get(waiter.tenantId);
    const at = queue?.indexOf(waiter) ?? -1;
    if (at < 0) return false;
    queue!.splice(at, 1);
    if (queue!.length === 0) this.queues.delete(waiter.tenantId);
    return true;
  }

  /** Up to `count` waiters in serving order: rounds over the tenants, each giving up to its weight. */
  head(count: number, weightOf: (tenantId: string) => number): Waiter[] {
    const tenants = [...this.queues.keys()].sort();
    const start =
      this.last === undefined
        ? 0
        : Math.max(
            0,
            tenants.findIndex((tenant) => tenant > this.last!),
          );
    const ring = [...tenants.slice(start), ...tenants.slice(0, start)];
    const taken = new Map<string, number>();
    const out: Waiter[] = [];
    for (let more = true; more && out.length < count; ) {
      more = false;
      for (const tenant of ring) {
        const queue = this.queues.get(tenant)!;
        const from = taken.get(tenant) ?? 0;
        const next = queue.slice(from, from + Math.min(weightOf(tenant), count - out.length));
        if (next.length === 0) continue;
        taken.set(tenant, from + next.length);
        out.push(...next);
        more = true;
        if (out.length >= count) break;
      }
    }
    return out;
  }

  /** `waiter` got through: the next round starts after its tenant. */
  served(waiter: Waiter): void {
    if (this.remove(waiter)) this.last = waiter.tenantId;
  }
}

export class PaceQueue {
  /** Index 0: transactional; 1: bulk. */
  private readonly lanes: [Lane, Lane] = [new Lane(), new Lane()];
  private serving = false;

  /**
   * `roundSize`: how many waiters one round checks, from the head: the provider's QPS, the most
   * one second can let through (a thousand bulk sends queued for a 10 QPS vendor then cost ten
   * checks a round, not a thousand denied ones).
   */
  constructor(
    private readonly check: PaceCheck,
    private readonly roundSize: () => number = () => Number.POSITIVE_INFINITY,
    private readonly weightOf: (tenantId: string) => number = () => 1,
  ) {}

  /**
   * Resolves when the caller may send; rejects when `signal` aborts the wait or a check fails.
   * With no one waiting the caller checks at once, as if there were no queue (a provider whose
   * pace is not reached costs one check a send); only a denied caller queues.
   */
  async enter(priority: Message['priority'], signal?: AbortSignal, tenantId = ''): Promise<void> {
    signal?.throwIfAborted();
    if (!this.serving && this.lanes[0].size === 0 && this.lanes[1].size === 0 && (await this.check()).allowed) return;
    return this.wait(priority, signal, tenantId);
  }

  private wait(priority: Message['priority'], signal: AbortSignal | undefined, tenantId: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const lane = this.lanes[priority === 'bulk' ? 1 : 0];
      const onAbort = () => {
        lane.remove(waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        tenantId,
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
   * Rounds until no one waits: the first `roundSize()` waiters are checked in one turn, in serving
   * order (the limiter takes one turn's checks as one batch, in order), so the free slots of the
   * moment go to the first in line; the rest wait for the earliest retry the denials named.
   */
  private async serve(): Promise<void> {
    try {
      for (;;) {
        const size = Math.max(1, this.roundSize());
        const round = this.lanes[0].head(size, this.weightOf);
        if (round.length < size) round.push(...this.lanes[1].head(size - round.length, this.weightOf));
        if (round.length === 0) return;
        const outcomes = await Promise.allSettled(round.map(() => this.check()));
        let retryAfterMs = Number.POSITIVE_INFINITY;
        outcomes.forEach((outcome, i) => {
          const waiter = round[i]!;
          if (outcome.status === 'fulfilled' && !outcome.value.allowed) {
            retryAfterMs = Math.min(retryAfterMs, outcome.value.retryAfterMs);
            return;
          }
          for (const lane of this.lanes) lane.served(waiter);
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

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

/**
 * One lane's waiters, a queue per tenant, served by deficit round-robin: the tenant whose turn it
 * is may send up to its weight, across as many rounds as that takes, then the turn passes to the
 * next tenant (by id, in a ring).
 */
class Lane {
  private readonly queues = new Map<string, Waiter[]>();
  /** Whose turn it is, and how many sends it has left of it. */
  private turn: { tenantId: string; left: number } | undefined;

  constructor(private readonly weightOf: (tenantId: string) => number) {}

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

  /** The tenants in ring order, the one whose turn it is first. */
  private ring(): string[] {
    const tenants = [...this.queues.keys()].sort();
    const from = this.turn ? tenants.findIndex((tenant) => tenant >= this.turn!.tenantId) : 0;
    return from <= 0 ? tenants : [...tenants.slice(from), ...tenants.slice(0, from)];
  }

  /** Up to `count` waiters in serving order: the current turn's rest, then each next tenant's weight, round after round. */
  head(count: number): Waiter[] {
    const taken = new Map<string, number>();
    const out: Waiter[] = [];
    const ring = this.ring();
    for (let pass = 0, more = true; more && out.length < count; pass++) {
      more = false;
      for (const tenant of ring) {
        const queue = this.queues.get(tenant)!;
        const from = taken.get(tenant) ?? 0;
        const quota = pass === 0 && this.turn?.tenantId === tenant ? this.turn.left : this.weightOf(tenant);
        const next = queue.slice(from, from + Math.min(quota, count - out.length));
        if (next.length === 0) continue;
        taken.set(tenant, from + next.length);
        out.push(...next);
        more = true;
        if (out.length >= count) break;
      }
    }
    return out;
  }

  /** `waiter` got through (in {@link head}'s order): its tenant's turn goes on, or passes on. */
  served(waiter: Waiter): void {
    if (!this.remove(waiter)) return;
    const { tenantId } = waiter;
    const left = (this.turn?.tenantId === tenantId ? this.turn.left : this.weightOf(tenantId)) - 1;
    if (left > 0) {
      this.turn = { tenantId, left };
      return;
    }
    // The turn passes to the next tenant in the ring.
    const tenants = [...this.queues.keys()].sort();
    const next = tenants.find((tenant) => tenant > tenantId) ?? tenants[0];
    this.turn = next === undefined ? undefined : { tenantId: next, left: this.weightOf(next) };
  }
}

export class PaceQueue {
  /** Index 0: transactional; 1: bulk. */
  private readonly lanes: [Lane, Lane];
  private serving = false;

  /**
   * `roundSize`: how many waiters one round checks, from the head: the provider's QPS, the most
   * one second can let through (a thousand bulk sends queued for a 10 QPS vendor then cost ten
   * checks a round, not a thousand denied ones).
   */
  constructor(
    private readonly check: PaceCheck,
    private readonly roundSize: () => number = () => Number.POSITIVE_INFINITY,
    weightOf: (tenantId: string) => number = () => 1,
  ) {
    this.lanes = [new Lane(weightOf), new Lane(weightOf)];
  }

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
        const round = this.lanes[0].head(size);
        if (round.length < size) round.push(...this.lanes[1].head(size - round.length));
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

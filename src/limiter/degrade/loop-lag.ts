/**
 * How long this process's own event loop held calls up. A call to Redis is slow for the breaker
 * only by what Redis and the network add: when the process is busy (a batch of a thousand
 * decisions, a burst of JSON to parse), a reply waits for the loop, and a decision waits for its
 * batch to be sent, however fast Redis answered. Counting that as a slow Redis opened the breaker
 * under the service's own batch load and sent decisions to the fallback.
 *
 * A timer every `intervalMs` measures how late it fires; the lateness adds up into
 * {@link EventLoopLag.accrued}. A call reads it when it starts and when it ends: the difference
 * (an upper bound of the delay the loop added, to within one interval) is taken off its latency.
 */
import type { Clock } from '../clock.js';

/** What the breaker and the DegradingLimiter read: milliseconds of lateness accrued so far. */
export interface LoopLagSource {
  /** Total lateness observed since the source started, ms, including the tick overdue now; never decreases. */
  accrued(): number;
}

export interface EventLoopLagOptions {
  /** Monotonic milliseconds (default `performance.now()`); tests pass a ManualClock and call {@link EventLoopLag.sample}. */
  clock?: Clock;
  /** Interval of the timer, ms, default 5. */
  intervalMs?: number;
  /** Start the timer (default true); false: only {@link EventLoopLag.sample} advances it (tests). */
  timer?: boolean;
}

export class EventLoopLag implements LoopLagSource {
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private expected: number;
  private total = 0;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(options: EventLoopLagOptions = {}) {
    this.clock = options.clock ?? { now: () => performance.now() };
    this.intervalMs = options.intervalMs ?? 5;
    if (!(this.intervalMs > 0 && Number.isFinite(this.intervalMs))) throw new RangeError('intervalMs must be a positive number');
    this.expected = this.clock.now() + this.intervalMs;
    if (options.timer !== false) {
      this.timer = setInterval(() => this.sample(), this.intervalMs);
      // Never keeps a process alive.
      this.timer.unref();
    }
  }

  /** One tick of the timer: adds how late it came. */
  sample(): void {
    const now = this.clock.now();
    this.total += Math.max(0, now - this.expected);
    this.expected = now + this.intervalMs;
  }

  accrued(): number {
    return this.total + Math.max(0, this.clock.now() - this.expected);
  }

  /** Stops the timer. */
  close(): void {
    clearInterval(this.timer);
  }
}

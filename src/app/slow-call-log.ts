/**
 * Slow Redis limiter calls, logged at most once per interval with how many there were and the
 * slowest. Under load one slow moment makes every decision of a batch slow, and one warning line
 * per decision flooded the log with thousands of lines a second (writing them made Redis mode
 * measurably slower). `sluice_redis_slow_calls_total` still counts every call.
 */
import type { Clock } from '../limiter/index.js';

export interface SlowCallSummary {
  /** Slow calls since the previous line (this one included). */
  calls: number;
  /** The slowest of them, ms. */
  maxMs: number;
}

export class SlowCallLog {
  private calls = 0;
  private maxMs = 0;
  private lastLineAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly write: (summary: SlowCallSummary) => void,
    private readonly clock: Clock,
    private readonly intervalMs = 10_000,
  ) {}

  /** One slow call of `ms`: written at once if no line was written within the interval, else counted. */
  record(ms: number): void {
    this.calls++;
    this.maxMs = Math.max(this.maxMs, ms);
    const now = this.clock.now();
    if (now - this.lastLineAt < this.intervalMs) return;
    this.write({ calls: this.calls, maxMs: Math.round(this.maxMs * 10) / 10 });
    this.calls = 0;
    this.maxMs = 0;
    this.lastLineAt = now;
  }
}

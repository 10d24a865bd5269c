/**
 * Slow Redis limiter calls, logged at most once per interval with how many there were and the
 * slowest. Under load one slow moment makes every decision of a batch slow, and one warning line
 * per decision flooded the log with thousands of lines a second (writing them made Redis mode
 * measurably slower). `sluice_redis_slow_calls_total` still counts every call.
 */
import type { Clock } from '../limiter/index.js';
import { ThrottledLog } from './throttled-log.js';

export interface SlowCallSummary {
  /** Slow calls since the previous line (this one included). */
  calls: number;
  /** The slowest of them, ms. */
  maxMs: number;
}

export class SlowCallLog {
  private maxMs = 0;
  private readonly lines: ThrottledLog<object>;

  constructor(write: (summary: SlowCallSummary) => void, clock: Clock, intervalMs = 10_000) {
    this.lines = new ThrottledLog(
      ({ repeated }) => {
        write({ calls: (repeated ?? 0) + 1, maxMs: Math.round(this.maxMs * 10) / 10 });
        this.maxMs = 0;
      },
      clock,
      intervalMs,
    );
  }

  /** One slow call of `ms`: written at once if no line was written within the interval, else counted. */
  record(ms: number): void {
    this.maxMs = Math.max(this.maxMs, ms);
    this.lines.record({});
  }
}

/**
 * Load generators. Both call `attempt` until a deadline; `attempt` resolves true when the
 * decision admitted, false when it denied, and rejects when the limiter failed.
 *
 * The deadline is checked after each attempt rather than by a timer: an in-process store resolves
 * through microtasks only, and a microtask loop never lets a timer fire.
 */
import { performance } from 'node:perf_hooks';
import { LatencyRecorder } from './latency.js';

/** One decision: true admitted, false denied; a rejection is a failure of the limiter. */
export type Attempt = () => Promise<boolean>;

export interface LoadResult {
  /** Decisions made (admitted + denied); failures are not decisions. */
  decisions: number;
  admitted: number;
  denied: number;
  failures: number;
  /** The first failure, to show what went wrong. */
  firstFailure: unknown;
  elapsedMs: number;
  /** Per-attempt latency (closed loop only). */
  latency: LatencyRecorder | undefined;
}

interface Tally {
  admitted: number;
  denied: number;
  failures: number;
  firstFailure: unknown;
}

function finish(tally: Tally, elapsedMs: number, latency: LatencyRecorder | undefined): LoadResult {
  return { ...tally, decisions: tally.admitted + tally.denied, elapsedMs, latency };
}

/**
 * A closed loop: `inFlight` workers, each starting its next attempt as soon as its previous one
 * settles, so exactly `inFlight` attempts are outstanding at all times (until the deadline).
 * Latency is from the call of `attempt` to its settlement.
 */
export async function closedLoop(attempt: Attempt, options: { inFlight: number; durationMs: number }): Promise<LoadResult> {
  const latency = new LatencyRecorder();
  const tally: Tally = { admitted: 0, denied: 0, failures: 0, firstFailure: undefined };
  const started = performance.now();
  const deadline = started + options.durationMs;
  const worker = async (): Promise<void> => {
    for (;;) {
      const t0 = performance.now();
      try {
        if (await attempt()) tally.admitted++;
        else tally.denied++;
      } catch (error) {
        if (tally.failures++ === 0) tally.firstFailure = error;
      }
      const t1 = performance.now();
      latency.record(t1 - t0);
      if (t1 >= deadline) return;
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, worker));
  return finish(tally, performance.now() - started, latency);
}

/** One attempt at a time, each awaited before the next: the cost of a decision with no overlap. */
export async function sequentialLoop(attempt: Attempt, options: { durationMs: number }): Promise<LoadResult> {
  const tally: Tally = { admitted: 0, denied: 0, failures: 0, firstFailure: undefined };
  const started = performance.now();
  const deadline = started + options.durationMs;
  for (let n = 1; ; n++) {
    try {
      if (await attempt()) tally.admitted++;
      else tally.denied++;
    } catch (error) {
      if (tally.failures++ === 0) tally.firstFailure = error;
    }
    // Reading the clock every 256 attempts keeps it out of what is measured.
    if ((n & 255) === 0 && performance.now() >= deadline) break;
  }
  return finish(tally, performance.now() - started, undefined);
}

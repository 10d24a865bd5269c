/**
 * The one way tests wait: `until` a condition holds (an event, polled), never a fixed time.
 * `sleep` is for pacing a load (a send every N ms, a drill's phase), not for waiting on an outcome.
 */

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface UntilOptions {
  /** Fails after this long (ms): a bound on waiting for an event, not a timing assertion. Default 15 s. */
  timeoutMs?: number;
  /** Between two polls (ms). Default 25. */
  intervalMs?: number;
  /** Named in the timeout's error: what was awaited. */
  what?: string;
}

/**
 * Polls `condition` until it holds; resolves to `performance.now()` at that moment. A condition
 * that throws counts as not yet (a server still starting refuses connections); after `timeoutMs`
 * it rejects, naming `what`, with the last thrown error as the cause.
 */
export async function until(condition: () => boolean | Promise<boolean>, options: UntilOptions = {}): Promise<number> {
  const { timeoutMs = 15_000, intervalMs = 25, what = 'a condition' } = options;
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await condition()) return performance.now();
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, lastError === undefined ? {} : { cause: lastError });
    }
    await sleep(intervalMs);
  }
}

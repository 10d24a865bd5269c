/**
 * The scrape loop of the live-charts page, apart from its markup so that it is tested without a DOM.
 *
 * Invariants: one scrape at a time (the next is scheduled when one ends, `intervalMs` after the
 * start of the last, so a slow server is never piled onto); a scrape is parsed before it is
 * reported (a malformed exposition is a failed scrape, not wrong numbers); after `stop()` nothing
 * is scheduled and nothing reported, even by a scrape still in flight.
 */
import { type Exposition, parseExposition } from './prometheus.js';

export interface PollOptions {
  /** Resolves the text of `GET /metrics`. */
  readonly fetchMetrics: () => Promise<string>;
  readonly intervalMs: number;
  /** A parsed scrape and its time: when its answer arrived. */
  readonly onScrape: (atMs: number, families: Exposition) => void;
  /** A scrape that failed (fetch rejected, or the text did not parse), and when. */
  readonly onError: (message: string, atMs: number) => void;
  /** Default `Date.now`. */
  readonly now?: () => number;
}

/** Starts scraping at once; returns the function that stops it. */
export function startPolling(options: PollOptions): () => void {
  const now = options.now ?? Date.now;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const scrape = async () => {
    timer = undefined;
    const startedMs = now();
    try {
      const families = parseExposition(await options.fetchMetrics());
      if (!stopped) options.onScrape(now(), families);
    } catch (error) {
      if (!stopped) options.onError(error instanceof Error ? error.message : String(error), now());
    }
    if (!stopped) timer = setTimeout(scrape, Math.max(0, startedMs + options.intervalMs - now()));
  };
  void scrape();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}

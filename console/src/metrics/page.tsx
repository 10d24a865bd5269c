/**
 * The console's live charts: `GET /metrics` of the instance that answers, scraped every
 * `intervalMs` (2 s) while the page is mounted, the last {@link HISTORY} scrapes kept, and one chart
 * per entry of {@link CHARTS}.
 *
 * The loop is {@link startPolling} (one scrape at a time, stopped on unmount). A failed scrape
 * shows an alert and keeps the history; the next scrape that succeeds clears the alert.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { LineChart } from './chart.js';
import { startPolling } from './poll.js';
import { appendScrape, type Scrape, scrapeOf } from './rates.js';
import { CHART_METRICS, CHARTS, chartLines } from './series.js';

/** Scrapes kept: two minutes at the default interval. */
export const HISTORY = 60;
export const DEFAULT_INTERVAL_MS = 2_000;

export interface MetricsPageProps {
  /** Resolves the text of `GET /metrics`; rejects when the scrape failed (the reason is shown). */
  readonly fetchMetrics: () => Promise<string>;
  /** Time between the starts of two scrapes. Default 2000 ms. */
  readonly intervalMs?: number;
}

interface ScrapeState {
  readonly history: readonly Scrape[];
  readonly error?: { readonly message: string; readonly atMs: number };
}

const clockTime = (atMs: number) => new Date(atMs).toLocaleTimeString();

export function MetricsPage({ fetchMetrics, intervalMs = DEFAULT_INTERVAL_MS }: MetricsPageProps) {
  const [state, setState] = useState<ScrapeState>({ history: [] });

  // The latest function, read at each scrape: a shell passing a new arrow at each render must not
  // restart the loop (and scrape again at once).
  const fetchRef = useRef(fetchMetrics);
  fetchRef.current = fetchMetrics;

  useEffect(
    () =>
      startPolling({
        fetchMetrics: () => fetchRef.current(),
        intervalMs,
        onScrape: (atMs, families) =>
          setState((previous) => ({ history: appendScrape(previous.history, scrapeOf(atMs, families, CHART_METRICS), HISTORY) })),
        onError: (message, atMs) => setState((previous) => ({ history: previous.history, error: { message, atMs } })),
      }),
    [intervalMs],
  );

  const { history, error } = state;
  const first = history[0];
  const last = history[history.length - 1];
  const seconds = Number((intervalMs / 1000).toFixed(1));
  return (
    <section class="metrics-page" aria-labelledby="metrics-page-heading">
      <h2 id="metrics-page-heading">Live metrics</h2>
      <p>
        From <code>GET /metrics</code> of the instance that answers, every {seconds} s; the last {HISTORY} scrapes are kept. Rates are per
        second between two scrapes.
      </p>
      {error ? (
        <p role="alert" class="metrics-page-error">
          Scrape failed at {clockTime(error.atMs)}: {error.message}. Trying again every {seconds} s.
        </p>
      ) : null}
      <p class="metrics-page-status">
        {last ? `Last scrape at ${clockTime(last.atMs)} (${history.length} of ${HISTORY} kept).` : 'Waiting for the first scrape…'}
      </p>
      {first && last
        ? CHARTS.map((spec) => (
            <LineChart
              key={spec.id}
              spec={spec}
              lines={chartLines(spec, history)}
              fromMs={first.atMs}
              toMs={last.atMs}
              waiting={spec.kind === 'rate' && history.length < 2}
            />
          ))
        : null}
    </section>
  );
}

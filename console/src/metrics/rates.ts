/**
 * A short history of scrapes and what the charts draw from it: per-second rates of counters between
 * consecutive scrapes, and gauges as they are. Pure: the time of each scrape is given by the caller
 * (the page reads its clock once per scrape; tests pass their own).
 *
 * Invariants:
 * - Scrape times strictly increase; a scrape older than the last starts the history again, since
 *   no rate can be computed across a clock step backwards.
 * - A counter that went down restarted (a process restart, or a new instance behind the same
 *   address): its increase is its new value, counted from zero, as Prometheus's `rate()` does. A
 *   changed `process_start_time_seconds` marks every counter of the scrape as restarted, which also
 *   catches a restart after which a counter already climbed past its old value.
 * - A labelled series absent from the previous scrape started from zero after it: prom-client
 *   exports a label set only once it is first counted.
 */
import { type Exposition, labelKey, type MetricFamily, type Sample } from './prometheus.js';

export interface Scrape {
  /** When the scrape was taken, in milliseconds (any monotonic-enough clock; only differences matter). */
  readonly atMs: number;
  readonly families: Exposition;
}

/** prom-client's default gauge of the process start, used to tell restarts. */
export const PROCESS_START = 'process_start_time_seconds';

/** Names a sample's line in a chart, from its labels; `undefined` leaves the sample out. */
export type GroupOf = (labels: Readonly<Record<string, string>>) => string | undefined;

/** One line: a value (or `null`, no data) per time of its {@link Lines}. */
export interface Line {
  readonly name: string;
  readonly values: readonly (number | null)[];
}

export interface Lines {
  readonly times: readonly number[];
  readonly lines: readonly Line[];
}

export interface LinesOptions {
  /** Lines always drawn, first and in this order, at 0 where no sample fell in them. */
  readonly always?: readonly string[];
}

/** A scrape keeping only the families named in `keep` (and the process start), to bound memory. */
export function scrapeOf(atMs: number, families: Exposition, keep?: ReadonlySet<string>): Scrape {
  if (!keep) return { atMs, families };
  const kept = new Map<string, MetricFamily>();
  for (const [name, family] of families) if (keep.has(name) || name === PROCESS_START) kept.set(name, family);
  return { atMs, families: kept };
}

/** The history with `scrape` appended, the oldest dropped beyond `capacity` scrapes. */
export function appendScrape(history: readonly Scrape[], scrape: Scrape, capacity: number): readonly Scrape[] {
  if (!Number.isInteger(capacity) || capacity < 2) throw new RangeError('capacity must be an integer of at least 2');
  const last = history[history.length - 1];
  if (last && scrape.atMs <= last.atMs) return [scrape];
  const next = [...history, scrape];
  return next.length > capacity ? next.slice(next.length - capacity) : next;
}

/** Per-second rates of the counter `metric` between consecutive scrapes, summed per line. */
export function counterRates(history: readonly Scrape[], metric: string, groupOf: GroupOf, options: LinesOptions = {}): Lines {
  const times: number[] = [];
  const columns: Map<string, number>[] = [];
  for (let index = 1; index < history.length; index++) {
    const previous = history[index - 1]!;
    const current = history[index]!;
    const restarted = startOf(previous) !== startOf(current);
    const before = new Map(samplesOf(previous.families, metric).map((sample) => [labelKey(sample.labels), sample.value]));
    const seconds = (current.atMs - previous.atMs) / 1000;
    const column = new Map<string, number>();
    for (const sample of samplesOf(current.families, metric)) {
      const line = groupOf(sample.labels);
      if (line === undefined) continue;
      const was = restarted ? undefined : before.get(labelKey(sample.labels));
      const increase = was === undefined || sample.value < was ? sample.value : sample.value - was;
      column.set(line, (column.get(line) ?? 0) + increase / seconds);
    }
    times.push(current.atMs);
    columns.push(column);
  }
  return linesOf(times, columns, options);
}

/** The gauge `metric` at each scrape, summed per line. */
export function gaugeValues(history: readonly Scrape[], metric: string, groupOf: GroupOf, options: LinesOptions = {}): Lines {
  const columns = history.map((scrape) => {
    const column = new Map<string, number>();
    for (const sample of samplesOf(scrape.families, metric)) {
      const line = groupOf(sample.labels);
      if (line !== undefined) column.set(line, (column.get(line) ?? 0) + sample.value);
    }
    return column;
  });
  return linesOf(
    history.map((scrape) => scrape.atMs),
    columns,
    options,
  );
}

/**
 * The value of each line at the newest time, in the order of the lines. A line without a value
 * there (its series is gone: a partition no longer held, a restarted process) has no current value
 * and is left out, rather than shown with a stale one.
 */
export function latestValues(lines: Lines): { name: string; value: number }[] {
  const latest: { name: string; value: number }[] = [];
  for (const line of lines.lines) {
    const value = line.values[line.values.length - 1];
    if (value !== null && value !== undefined) latest.push({ name: line.name, value });
  }
  return latest;
}

/** Samples named `name`: a family's own (`x`) or a histogram's or summary's (`x_count` of family `x`). */
export function samplesOf(families: Exposition, name: string): readonly Sample[] {
  const own = families.get(name);
  if (own) return own.samples.filter((sample) => sample.name === name);
  const base = /^(.*)_(?:bucket|sum|count)$/.exec(name)?.[1];
  return base ? (families.get(base)?.samples.filter((sample) => sample.name === name) ?? []) : [];
}

function startOf(scrape: Scrape): number | undefined {
  return scrape.families.get(PROCESS_START)?.samples[0]?.value;
}

function linesOf(times: number[], columns: readonly Map<string, number>[], options: LinesOptions): Lines {
  const always = options.always ?? [];
  const seen = new Set<string>();
  for (const column of columns) for (const name of column.keys()) if (!always.includes(name)) seen.add(name);
  const names = [...always, ...[...seen].sort()];
  const lines = names.map((name) => ({
    name,
    values: columns.map((column) => column.get(name) ?? (always.includes(name) ? 0 : null)),
  }));
  return { times, lines };
}

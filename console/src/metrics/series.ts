/**
 * What the live-charts page shows, defined once: one {@link ChartSpec} per chart, each naming a
 * sluice metric (docs/metrics.md; a test fails when a chart names a metric or label the docs and the
 * registry do not have) and the labels its lines are split by.
 */
import { counterRates, type GroupOf, gaugeValues, type Lines, type Scrape } from './rates.js';

/** `sluice_breaker_state` values (src/metrics/metrics.ts `BREAKER_STATE_VALUE`; a test keeps them equal). */
export const BREAKER_STATES = ['closed', 'half-open', 'open'] as const;

export interface ChartSpec {
  /** Stable id, for element ids and tests. */
  readonly id: string;
  readonly title: string;
  /** One sentence under the title: what the lines are and how to read them. */
  readonly description: string;
  /** A metric family of docs/metrics.md. */
  readonly metric: string;
  /** `rate`: a counter as per-second rates between scrapes; `gauge`: values as they are. */
  readonly kind: 'rate' | 'gauge';
  /** The labels the lines are split by; others are summed over. */
  readonly labels: readonly string[];
  /** A line's name from the values of {@link labels} only; default: the values, space-separated. */
  readonly lineName?: (labels: Readonly<Record<string, string>>) => string;
  /** Lines drawn even at zero, first, in this order. */
  readonly always?: readonly string[];
  /** Unit after a value: `/s` for rates. */
  readonly unit: string;
  /** Fixed y-axis ticks (a state gauge), instead of ticks from 0 to the largest value. */
  readonly ticks?: readonly number[];
  /** A value as read by a person (a state's name); default: a number and the unit. */
  readonly format?: (value: number) => string;
  /** Shown when the instance that answered has no sample of the metric. */
  readonly empty: string;
}

export const CHARTS: readonly ChartSpec[] = [
  {
    id: 'decisions',
    title: 'Limiter decisions per second',
    description: 'Admitted (OK) against rejected (BANNED or RATE_LIMITED) decisions of the frequency limiter.',
    metric: 'sluice_decisions_total',
    kind: 'rate',
    labels: ['outcome'],
    lineName: (labels) => (labels.outcome === 'OK' ? 'admitted' : 'rejected'),
    always: ['admitted', 'rejected'],
    unit: '/s',
    empty: 'No decisions yet on this instance.',
  },
  {
    id: 'rejections',
    title: 'Rejections per second by code',
    description: 'Requests the admission chain refused, by the stable error code answered.',
    metric: 'sluice_admission_rejections_total',
    kind: 'rate',
    labels: ['code'],
    unit: '/s',
    empty: 'No rejection since this instance started.',
  },
  {
    id: 'breaker',
    title: 'Limiter breaker state',
    description: 'Closed: Redis decides. Half-open: probing Redis. Open: the fallback decides. Without Redis it reads closed.',
    metric: 'sluice_breaker_state',
    kind: 'gauge',
    labels: [],
    lineName: () => 'breaker',
    unit: '',
    ticks: [0, 1, 2],
    format: (value) => BREAKER_STATES[value] ?? String(value),
    empty: 'No breaker on this instance.',
  },
  {
    id: 'degraded',
    title: 'Fallback decisions per second',
    description: 'Decisions made without Redis, by the fallback mode used (local, static, allow, deny).',
    metric: 'sluice_degraded_decisions_total',
    kind: 'rate',
    labels: ['mode'],
    unit: '/s',
    empty: 'No fallback decision since this instance started.',
  },
  {
    id: 'backlog',
    title: 'Due-index backlog',
    description: 'Entries due and not yet claimed, by partition; should stay near zero.',
    metric: 'sluice_due_index_backlog',
    kind: 'gauge',
    labels: ['partition'],
    lineName: (labels) => `partition ${labels.partition}`,
    unit: '',
    empty: 'None reported by this instance: the worker holding a partition reports it, when the due index is in Redis.',
  },
  {
    id: 'messages',
    title: 'Messages not yet finished',
    description: 'Messages queued, scheduled or sending, over every channel (counted in SQL at each scrape).',
    metric: 'sluice_messages',
    kind: 'gauge',
    labels: ['status'],
    unit: '',
    empty: 'None counted: every message is finished, or this instance does not count them.',
  },
  {
    id: 'sends',
    title: 'Send attempts per second by provider',
    description: 'Attempts to each provider by outcome: sent, retryable (tried again) or permanent.',
    metric: 'sluice_sends_total',
    kind: 'rate',
    labels: ['provider', 'outcome'],
    unit: '/s',
    empty: 'No send attempt on this instance: instances running the worker role count them.',
  },
];

/** Every metric family the page reads (what a scrape keeps). */
export const CHART_METRICS: ReadonlySet<string> = new Set(CHARTS.map((chart) => chart.metric));

/** The lines of one chart over the history. */
export function chartLines(chart: ChartSpec, history: readonly Scrape[]): Lines {
  const groupOf: GroupOf = (labels) => {
    const picked: Record<string, string> = {};
    for (const label of chart.labels) picked[label] = labels[label] ?? '';
    return chart.lineName ? chart.lineName(picked) : chart.labels.map((label) => picked[label]).join(' ');
  };
  const options = chart.always ? { always: chart.always } : {};
  return chart.kind === 'rate'
    ? counterRates(history, chart.metric, groupOf, options)
    : gaugeValues(history, chart.metric, groupOf, options);
}

/** A value as the chart's legend, label and table show it. */
export function formatValue(chart: Pick<ChartSpec, 'unit' | 'format'>, value: number): string {
  if (chart.format) return chart.format(value);
  const digits = Math.abs(value) >= 100 || Number.isInteger(value) ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${Number(value.toFixed(digits))}${chart.unit}`;
}

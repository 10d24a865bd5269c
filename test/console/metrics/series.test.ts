import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../../console/src/metrics/prometheus.js';
import { type Scrape, scrapeOf } from '../../../console/src/metrics/rates.js';
import { BREAKER_STATES, CHART_METRICS, CHARTS, chartLines, formatValue } from '../../../console/src/metrics/series.js';
import { BREAKER_STATE_VALUE, Metrics } from '../../../src/metrics/index.js';

interface DocumentedMetric {
  type: string;
  labels: Set<string>;
}

/** The rows of docs/metrics.md's table: name, type and the backticked names of its labels cell. */
function documented(): Map<string, DocumentedMetric> {
  const text = readFileSync(new URL('../../../docs/metrics.md', import.meta.url), 'utf8');
  const rows = new Map<string, DocumentedMetric>();
  for (const line of text.split('\n')) {
    // Cells are split on `|` but not on the `\|` that separates enum values inside a cell.
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    const name = /^`(sluice_[a-z0-9_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!name) continue;
    rows.set(name, { type: cells[2]!, labels: new Set([...cells[3]!.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!)) });
  }
  return rows;
}

describe('CHARTS, the metrics the live-charts page shows', () => {
  const docs = documented();
  const registry = new Map(
    (
      new Metrics({ defaultMetrics: false }).registry.getMetricsAsArray() as unknown as {
        name: string;
        type: string;
        labelNames: string[];
      }[]
    ).map((metric) => [metric.name, metric]),
  );

  it('reads the docs table', () => {
    expect(docs.size).toBeGreaterThan(20);
    expect(docs.get('sluice_sends_total')).toEqual({ type: 'counter', labels: new Set(['provider', 'console', 'outcome']) });
  });

  it.each(CHARTS.map((chart) => [chart.id, chart] as const))('%s names a documented metric of its kind, with its labels', (_id, chart) => {
    const row = docs.get(chart.metric);
    expect(row, `${chart.metric} is not in docs/metrics.md`).toBeDefined();
    expect(row!.type).toBe(chart.kind === 'rate' ? 'counter' : 'gauge');
    expect(chart.labels.filter((label) => !row!.labels.has(label))).toEqual([]);
    // And the registry agrees with the docs (test/metrics keeps the two in step; this is the chart's side).
    const registered = registry.get(chart.metric)!;
    expect(registered.type).toBe(row!.type);
    expect(chart.labels.filter((label) => !registered.labelNames.includes(label))).toEqual([]);
  });

  it('covers what the issue asks: decisions, rejections by code, breaker, backlog, sends by provider', () => {
    expect([...CHART_METRICS]).toEqual(
      expect.arrayContaining([
        'sluice_decisions_total',
        'sluice_admission_rejections_total',
        'sluice_breaker_state',
        'sluice_due_index_backlog',
        'sluice_sends_total',
      ]),
    );
    expect(new Set(CHARTS.map((chart) => chart.id)).size).toBe(CHARTS.length);
  });

  it('names the breaker states as the registry numbers them', () => {
    expect(Object.fromEntries(BREAKER_STATES.map((state, value) => [state, value]))).toEqual(BREAKER_STATE_VALUE);
    const breaker = CHARTS.find((chart) => chart.id === 'breaker')!;
    expect(breaker.ticks?.map((tick) => formatValue(breaker, tick))).toEqual(['closed', 'half-open', 'open']);
  });
});

describe('chartLines on a registry fed as sluice feeds it', () => {
  it('splits decisions into admitted and rejected, sends by provider and outcome, backlog by partition', async () => {
    const metrics = new Metrics();
    const history: Scrape[] = [];
    const take = async (atMs: number) => history.push(scrapeOf(atMs, parseExposition(await metrics.text()), CHART_METRICS));
    await take(0);
    metrics.decisions.inc({ outcome: 'OK', channel: 'sms', rule: 'none' }, 8);
    metrics.decisions.inc({ outcome: 'OK', channel: 'email', rule: 'none' }, 2);
    metrics.decisions.inc({ outcome: 'BANNED', channel: 'sms', rule: '1' }, 1);
    metrics.decisions.inc({ outcome: 'RATE_LIMITED', channel: 'sms', rule: '0' }, 3);
    metrics.admissionRejections.inc({ interceptor: 'frequency', code: 'RATE_LIMITED' }, 3);
    metrics.admissionRejections.inc({ interceptor: 'quota', code: 'QUOTA_EXCEEDED' }, 2);
    metrics.sends.inc({ provider: 'twilio', outcome: 'sent' }, 6);
    metrics.sends.inc({ provider: 'twilio', outcome: 'retryable' }, 1);
    metrics.sends.inc({ provider: 'smtp', outcome: 'sent' }, 4);
    metrics.dueIndexBacklog.set({ partition: 'sms:0' }, 12);
    metrics.breakerState.set(BREAKER_STATE_VALUE.open);
    await take(2_000);
    const lines = (id: string) => chartLines(CHARTS.find((chart) => chart.id === id)!, history);
    expect(lines('decisions').lines).toEqual([
      { name: 'admitted', values: [5] },
      { name: 'rejected', values: [2] },
    ]);
    expect(lines('rejections').lines).toEqual([
      { name: 'QUOTA_EXCEEDED', values: [1] },
      { name: 'RATE_LIMITED', values: [1.5] },
    ]);
    expect(lines('sends').lines).toEqual([
      { name: 'smtp sent', values: [2] },
      { name: 'twilio retryable', values: [0.5] },
      { name: 'twilio sent', values: [3] },
    ]);
    expect(lines('backlog')).toEqual({ times: [0, 2_000], lines: [{ name: 'partition sms:0', values: [null, 12] }] });
    expect(lines('breaker').lines).toEqual([{ name: 'breaker', values: [0, 2] }]);
    expect(lines('degraded').lines).toEqual([]);
  });

  it('formats values with the unit and a precision that suits them', () => {
    const rate = { unit: '/s' };
    expect([0, 3, 0.5, 0.123, 12.34, 1234.5].map((value) => formatValue(rate, value))).toEqual([
      '0/s',
      '3/s',
      '0.5/s',
      '0.12/s',
      '12.3/s',
      '1235/s',
    ]);
  });
});

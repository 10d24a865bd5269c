import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../../console/src/metrics/prometheus.js';
import {
  appendScrape,
  counterRates,
  gaugeValues,
  latestValues,
  PROCESS_START,
  type Scrape,
  scrapeOf,
} from '../../../console/src/metrics/rates.js';
import { Metrics } from '../../../src/metrics/index.js';

const scrape = async (metrics: Metrics, atMs: number): Promise<Scrape> => scrapeOf(atMs, parseExposition(await metrics.text()));
const admittedOrRejected = (labels: Readonly<Record<string, string>>) => (labels.outcome === 'OK' ? 'admitted' : 'rejected');
const decide = (metrics: Metrics, outcome: string, times: number) =>
  metrics.decisions.inc({ outcome, channel: 'sms', rule: outcome === 'OK' ? 'none' : '0' }, times);

describe('counterRates', () => {
  it('gives per-second rates between scrapes, summed per line, a new label set counted from zero', async () => {
    const metrics = new Metrics();
    const history: Scrape[] = [];
    decide(metrics, 'OK', 10);
    history.push(await scrape(metrics, 1_000));
    decide(metrics, 'OK', 10);
    decide(metrics, 'RATE_LIMITED', 4); // first seen in this scrape
    history.push(await scrape(metrics, 3_000));
    decide(metrics, 'OK', 40);
    decide(metrics, 'BANNED', 2);
    decide(metrics, 'RATE_LIMITED', 4);
    history.push(await scrape(metrics, 7_000));
    expect(counterRates(history, 'sluice_decisions_total', admittedOrRejected)).toEqual({
      times: [3_000, 7_000],
      lines: [
        { name: 'admitted', values: [5, 10] },
        { name: 'rejected', values: [2, 1.5] },
      ],
    });
  });

  it('counts a counter that went down (a restarted process) from zero, never as a negative rate', async () => {
    const before = new Metrics();
    decide(before, 'OK', 100);
    const restarted = new Metrics();
    decide(restarted, 'OK', 6);
    const history = [await scrape(before, 0), await scrape(restarted, 2_000)];
    expect(counterRates(history, 'sluice_decisions_total', admittedOrRejected).lines).toEqual([{ name: 'admitted', values: [3] }]);
  });

  it('counts every counter from zero when process_start_time_seconds changed, even one already past its old value', async () => {
    const metrics = new Metrics();
    decide(metrics, 'OK', 100);
    const first = await metrics.text();
    decide(metrics, 'OK', 50);
    const start = /^process_start_time_seconds (\d+)$/m.exec(first)![1]!;
    // The same registry seen as a process started 100 s later: its 150 decisions are all new.
    const later = (await metrics.text()).replace(`${PROCESS_START} ${start}`, `${PROCESS_START} ${Number(start) + 100}`);
    expect(later).not.toBe(await metrics.text());
    const history = [scrapeOf(0, parseExposition(first)), scrapeOf(2_000, parseExposition(later))];
    expect(counterRates(history, 'sluice_decisions_total', admittedOrRejected).lines).toEqual([{ name: 'admitted', values: [75] }]);
    // Without the restart, the same two values are 50 new decisions.
    const same = [scrapeOf(0, parseExposition(first)), scrapeOf(2_000, parseExposition(await metrics.text()))];
    expect(counterRates(same, 'sluice_decisions_total', admittedOrRejected).lines).toEqual([{ name: 'admitted', values: [25] }]);
  });

  it('draws the lines named always at zero, leaves out what the grouping leaves out', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const history = [await scrape(metrics, 0)];
    decide(metrics, 'OK', 2);
    history.push(await scrape(metrics, 2_000));
    const onlyOk = (labels: Readonly<Record<string, string>>) => (labels.outcome === 'OK' ? 'OK' : undefined);
    expect(counterRates(history, 'sluice_decisions_total', onlyOk, { always: ['RATE_LIMITED', 'OK'] }).lines).toEqual([
      { name: 'RATE_LIMITED', values: [0] },
      { name: 'OK', values: [1] },
    ]);
    expect(counterRates(history.slice(1), 'sluice_decisions_total', onlyOk)).toEqual({ times: [], lines: [] });
  });
});

describe('gaugeValues and latestValues', () => {
  it("gives gauges as they are, null where a series is absent, and each line's value at the newest scrape", async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const byPartition = (labels: Readonly<Record<string, string>>) => `partition ${labels.partition}`;
    metrics.dueIndexBacklog.set({ partition: '0' }, 3);
    const history = [await scrape(metrics, 0)];
    metrics.dueIndexBacklog.set({ partition: '1' }, 7);
    history.push(await scrape(metrics, 2_000));
    metrics.dueIndexBacklog.remove({ partition: '1' }); // this instance stopped holding partition 1
    metrics.dueIndexBacklog.set({ partition: '0' }, 0);
    history.push(await scrape(metrics, 4_000));
    const lines = gaugeValues(history, 'sluice_due_index_backlog', byPartition);
    expect(lines).toEqual({
      times: [0, 2_000, 4_000],
      lines: [
        { name: 'partition 0', values: [3, 3, 0] },
        { name: 'partition 1', values: [null, 7, null] },
      ],
    });
    // Partition 1 is gone at the newest scrape: no current value, rather than its stale 7.
    expect(latestValues(lines)).toEqual([{ name: 'partition 0', value: 0 }]);
    expect(latestValues({ times: [0, 1], lines: [{ name: 'a', values: [1, 2] }] })).toEqual([{ name: 'a', value: 2 }]);
  });
});

describe('appendScrape and scrapeOf', () => {
  const empty = (atMs: number): Scrape => ({ atMs, families: new Map() });

  it('keeps the last scrapes up to its capacity and starts again when the clock went back', () => {
    let history: readonly Scrape[] = [];
    for (let at = 0; at < 5; at++) history = appendScrape(history, empty(at * 2_000), 3);
    expect(history.map((s) => s.atMs)).toEqual([4_000, 6_000, 8_000]);
    expect(appendScrape(history, empty(8_000), 3).map((s) => s.atMs)).toEqual([8_000]);
    expect(() => appendScrape(history, empty(9_000), 1)).toThrow(RangeError);
  });

  it('keeps only the families asked for, and the process start', async () => {
    const metrics = new Metrics();
    const kept = scrapeOf(0, parseExposition(await metrics.text()), new Set(['sluice_breaker_state']));
    expect([...kept.families.keys()].sort()).toEqual([PROCESS_START, 'sluice_breaker_state']);
  });
});

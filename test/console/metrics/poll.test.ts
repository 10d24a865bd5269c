import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startPolling } from '../../../console/src/metrics/poll.js';
import { Metrics } from '../../../src/metrics/index.js';

/** A fetch whose answers the test gives one by one. */
function scripted() {
  const pending: { resolve: (text: string) => void; reject: (error: Error) => void }[] = [];
  const fetchMetrics = vi.fn(() => new Promise<string>((resolve, reject) => pending.push({ resolve, reject })));
  return { fetchMetrics, pending };
}

describe('startPolling', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('scrapes at once, then every interval, one at a time even when a scrape is slow', async () => {
    const { fetchMetrics, pending } = scripted();
    const scrapes: number[] = [];
    const stop = startPolling({ fetchMetrics, intervalMs: 2_000, onScrape: (atMs) => scrapes.push(atMs), onError: () => {} });
    expect(fetchMetrics).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(500);
    pending[0]!.resolve('a_total 1');
    await vi.advanceTimersByTimeAsync(0);
    expect(scrapes).toEqual([1_000_500]);
    await vi.advanceTimersByTimeAsync(1_499);
    expect(fetchMetrics).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1); // 2 s after the first scrape started
    expect(fetchMetrics).toHaveBeenCalledTimes(2);
    // A scrape slower than the interval: no second one in flight meanwhile, the next right after it.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(fetchMetrics).toHaveBeenCalledTimes(2);
    pending[1]!.resolve('a_total 2');
    await vi.advanceTimersByTimeAsync(0);
    expect(fetchMetrics).toHaveBeenCalledTimes(3);
    stop();
  });

  it('reports a failed fetch and a malformed text as errors, and goes on scraping', async () => {
    const { fetchMetrics, pending } = scripted();
    const events: string[] = [];
    const stop = startPolling({
      fetchMetrics,
      intervalMs: 2_000,
      onScrape: (_atMs, families) => events.push(`scrape ${[...families.keys()].join(',')}`),
      onError: (message) => events.push(`error ${message}`),
    });
    pending[0]!.reject(new Error('HTTP 503'));
    await vi.advanceTimersByTimeAsync(2_000);
    pending[1]!.resolve('a_total{b="c} 1');
    await vi.advanceTimersByTimeAsync(2_000);
    pending[2]!.resolve(await new Metrics({ defaultMetrics: false }).text());
    await vi.advanceTimersByTimeAsync(0);
    expect(events[0]).toBe('error HTTP 503');
    expect(events[1]).toBe('error metrics line 1: unterminated value of label b');
    expect(events[2]).toMatch(/^scrape sluice_decision_duration_seconds,sluice_decisions_total,/);
    expect(events).toHaveLength(3);
    stop();
  });

  it('after stop, schedules nothing and reports nothing, even from a scrape in flight', async () => {
    const { fetchMetrics, pending } = scripted();
    const reported = vi.fn();
    const stop = startPolling({ fetchMetrics, intervalMs: 2_000, onScrape: reported, onError: reported });
    pending[0]!.resolve('a_total 1');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(fetchMetrics).toHaveBeenCalledTimes(2);
    expect(reported).toHaveBeenCalledTimes(1);
    stop();
    pending[1]!.reject(new Error('late'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fetchMetrics).toHaveBeenCalledTimes(2);
    expect(reported).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stopped between two scrapes, clears the timer', async () => {
    const { fetchMetrics, pending } = scripted();
    const stop = startPolling({ fetchMetrics, intervalMs: 2_000, onScrape: () => {}, onError: () => {} });
    pending[0]!.resolve('a_total 1');
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});

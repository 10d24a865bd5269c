import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { RetentionPurger } from '../../src/delivery/retention.js';
import { ManualClock } from '../../src/limiter/clock.js';

/** A messages table of `finished` purgeable rows, deleted `limit` at a time. */
function table(finished: number) {
  const calls: { before: number; limit: number }[] = [];
  let left = finished;
  return {
    calls,
    left: () => left,
    messages: {
      async purgeFinished(options: { before: number; limit: number }) {
        calls.push(options);
        const deleted = Math.min(left, options.limit);
        left -= deleted;
        return deleted;
      },
    },
  };
}

describe('RetentionPurger', () => {
  it('deletes in batches until one comes back short, cutting off at now minus the retention', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 30));
    const rows = table(2500);
    const purged: number[] = [];
    const purger = new RetentionPurger({
      messages: rows.messages,
      clock,
      logger: pino({ level: 'silent' }),
      retentionDays: 30,
      batch: 1000,
      onPurged: (count) => purged.push(count),
    });
    expect(await purger.purgeOnce()).toBe(2500);
    expect(rows.calls).toEqual([
      { before: clock.now() - 30 * 86_400_000, limit: 1000 },
      { before: clock.now() - 30 * 86_400_000, limit: 1000 },
      { before: clock.now() - 30 * 86_400_000, limit: 1000 },
    ]);
    expect(purged).toEqual([1000, 1000, 500]);
    expect(await purger.purgeOnce()).toBe(0);
  });

  it('lets the event loop turn between batches (a synchronous SQLite driver would hold up everything else)', async () => {
    const rows = table(5000);
    const purger = new RetentionPurger({
      messages: rows.messages,
      clock: new ManualClock(0),
      logger: pino({ level: 'silent' }),
      retentionDays: 1,
    });
    let callsWhenOthersRan = -1;
    setImmediate(() => {
      callsWhenOthersRan = rows.calls.length;
    });
    expect(await purger.purgeOnce()).toBe(5000);
    // Something queued before the pass ran while it was under way, not after its last batch.
    expect(callsWhenOthersRan).toBeGreaterThan(0);
    expect(callsWhenOthersRan).toBeLessThan(rows.calls.length);
  });

  it('runs its first pass after the first delay, then every interval, until stopped', async () => {
    vi.useFakeTimers();
    try {
      const rows = table(3);
      const purger = new RetentionPurger({
        messages: rows.messages,
        clock: new ManualClock(0),
        logger: pino({ level: 'silent' }),
        retentionDays: 1,
        firstDelayMs: 10_000,
        intervalMs: 60_000,
      });
      purger.start();
      await vi.advanceTimersByTimeAsync(9_999);
      expect(rows.calls).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(rows.calls).toHaveLength(1);
      expect(rows.left()).toBe(0);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(rows.calls).toHaveLength(2);
      await purger.stop();
      await vi.advanceTimersByTimeAsync(600_000);
      expect(rows.calls).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

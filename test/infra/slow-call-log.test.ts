import { describe, expect, it } from 'vitest';
import { SlowCallLog, type SlowCallSummary } from '../../src/infra/slow-call-log.js';
import { ManualClock } from '../../src/limiter/clock.js';

describe('SlowCallLog', () => {
  it('writes the first slow call at once, then at most one line per interval with the count and the slowest', () => {
    const clock = new ManualClock(1_000_000);
    const lines: SlowCallSummary[] = [];
    const log = new SlowCallLog((summary) => lines.push(summary), clock, 10_000);
    log.record(12.34);
    expect(lines).toEqual([{ calls: 1, maxMs: 12.3 }]);
    for (let i = 0; i < 1000; i++) {
      clock.advance(5);
      log.record(10 + (i % 50));
    }
    // 5 s later: still inside the interval, nothing more written.
    expect(lines).toHaveLength(1);
    clock.advance(5_000);
    log.record(11);
    expect(lines).toEqual([
      { calls: 1, maxMs: 12.3 },
      { calls: 1001, maxMs: 59 },
    ]);
    clock.advance(10_000);
    log.record(20);
    expect(lines.at(-1)).toEqual({ calls: 1, maxMs: 20 });
  });
});

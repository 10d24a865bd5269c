import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { WorkerRoster } from '../../src/delivery/roster.js';

/** A Redis that answers the roster's beat with `workers()` live workers. */
function redisWith(workers: () => number) {
  const calls: unknown[][] = [];
  const answer = async (...args: unknown[]) => {
    calls.push(args);
    return workers();
  };
  return { calls, client: { evalsha: answer, eval: answer } };
}

describe('WorkerRoster', () => {
  it('holds at most ceil(partitions / live workers): may take below it, yields above it', async () => {
    let live = 1;
    const redis = redisWith(() => live);
    const roster = new WorkerRoster({
      client: redis.client,
      keyPrefix: 't:',
      partitions: 6,
      leaseMs: 60_000,
      logger: pino({ level: 'silent' }),
    });
    await roster.start();
    expect(roster.share()).toBe(6);
    for (let i = 0; i < 6; i++) roster.held(1);
    expect([roster.mayTake(), roster.shouldYield()]).toEqual([false, false]);

    live = 4; // two more beats' worth of workers joined: ceil(6 / 4) = 2
    await roster.stop();
    await roster.start();
    expect(roster.share()).toBe(2);
    expect(roster.shouldYield()).toBe(true);
    for (let i = 0; i < 4; i++) roster.held(-1);
    expect([roster.mayTake(), roster.shouldYield()]).toEqual([false, false]);
    roster.held(-1);
    expect(roster.mayTake()).toBe(true);
    await roster.stop();
    // The beat carries the roster key, this worker's id and the lease; stop leaves the roster.
    expect(redis.calls[0]).toEqual([expect.any(String), 1, 't:workers', roster.id, 60_000]);
    expect(String(redis.calls.at(-1)?.[0])).toContain('ZREM');
  });

  it('keeps the last count while Redis is away', async () => {
    let fail = false;
    const client = {
      evalsha: async () => {
        if (fail) throw new Error('ECONNREFUSED');
        return 3;
      },
      eval: async () => 3,
    };
    const roster = new WorkerRoster({ client, keyPrefix: 't:', partitions: 6, leaseMs: 60_000, logger: pino({ level: 'silent' }) });
    await roster.start();
    await roster.stop();
    fail = true;
    await roster.start();
    expect(roster.share()).toBe(2);
    await roster.stop();
  });
});

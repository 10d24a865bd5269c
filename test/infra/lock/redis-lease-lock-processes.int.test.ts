/**
 * Races between real processes over one RedisLeaseLock (children: lock-child.ts) on a private
 * redis-server. Leases are short (600 ms, renewal every 200 ms) to keep the file fast.
 * The safety property checked everywhere: a unit of work stamped at t by a holder (stamp taken
 * before asking isHeld()) is earlier than the moment any other contender acquired the lock.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../../support/private-redis.js';
import { describeWith } from '../../support/servers.js';
import { Contender } from './lock-contenders.js';

const LEASE_MS = 600;
const RENEW_MS = LEASE_MS / 3;
/** Room for process scheduling on a loaded 2-core machine; not a speed claim. */
const SCHEDULING_SLACK_MS = 1500;

describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'RedisLeaseLock across processes', () => {
  let redis: PrivateRedis;
  let running: Contender[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    await Promise.all(running.map((c) => c.stop()));
    running = [];
  });

  const start = async (count: number, leaseMs = LEASE_MS): Promise<Contender[]> => {
    const name = `race-${randomUUID()}`;
    const contenders = Array.from({ length: count }, (_, i) => new Contender(`child-${i}`, redis.url, name, leaseMs));
    running.push(...contenders);
    await Promise.all(contenders.map((c) => c.waitFor((e) => e.event === 'ready', 15_000)));
    return contenders;
  };

  /** The first contender to acquire, once it has done `works` units of work. */
  const firstHolder = async (contenders: Contender[], works: number): Promise<Contender> => {
    await Promise.any(contenders.map((c) => c.waitFor((e) => e.event === 'work' && (e.seq ?? 0) >= works, 10_000)));
    const holders = contenders.filter((c) => c.of('acquired').length > 0);
    expect(holders).toHaveLength(1);
    return holders[0]!;
  };

  const workStamps = (c: Contender) => c.of('work').map((e) => e.t!);

  /** Mutual exclusion over the whole run: the work of different tenures never interleaves in time. */
  const expectNoOverlap = (contenders: Contender[]) => {
    const tenures: { who: string; first: number; last: number }[] = [];
    for (const c of contenders) {
      let stamps: number[] = [];
      const close = () => {
        if (stamps.length > 0) tenures.push({ who: c.label, first: Math.min(...stamps), last: Math.max(...stamps) });
        stamps = [];
      };
      for (const e of c.events) {
        if (e.event === 'work') stamps.push(e.t!);
        else if (e.event === 'lost' || e.event === 'released' || e.event === 'acquired') close();
      }
      close();
    }
    tenures.sort((a, b) => a.first - b.first);
    for (let i = 1; i < tenures.length; i++) expect(tenures[i - 1]!.last, JSON.stringify(tenures)).toBeLessThan(tenures[i]!.first);
  };

  it('two contenders: exactly one ever holds while the holder lives', async () => {
    // A longer lease here: on a loaded machine a 600 ms starvation of the holder is a real (and
    // correct) handover, which is not what this test is about.
    const contenders = await start(2, 1500);
    const holder = await firstHolder(contenders, 1);
    // Several renewals long, so the others retry through many renewals of the holder.
    await new Promise((r) => setTimeout(r, 1800));
    // The others first: once the holder releases, a contender still running would rightly take over.
    const others = contenders.filter((c) => c !== holder);
    await Promise.all(others.map((c) => c.stop()));
    await holder.stop();
    expectNoOverlap(contenders);
    expect(holder.of('acquired')).toHaveLength(1);
    expect(holder.of('lost')).toHaveLength(0);
    expect(holder.of('work').length).toBeGreaterThan(10);
    for (const other of contenders.filter((c) => c !== holder)) {
      expect(other.of('acquired')).toHaveLength(0);
      expect(other.of('work')).toHaveLength(0);
    }
  });

  it('a holder killed with SIGKILL is replaced within the lease plus one renewal period', async () => {
    const contenders = await start(2);
    const holder = await firstHolder(contenders, 3);
    const other = contenders.find((c) => c !== holder)!;
    const killedAt = Date.now();
    holder.signal('SIGKILL');
    const acquired = await other.waitFor((e) => e.event === 'acquired', LEASE_MS + RENEW_MS + SCHEDULING_SLACK_MS + 2000);
    expect(acquired.t! - killedAt).toBeLessThanOrEqual(LEASE_MS + RENEW_MS + SCHEDULING_SLACK_MS);
    expect(Math.max(...workStamps(holder))).toBeLessThan(acquired.t!);
    await other.stop();
    expectNoOverlap(contenders);
  });

  it('a holder paused past its lease is replaced, and on SIGCONT notices the loss and does no more work', async () => {
    const contenders = await start(2);
    const holder = await firstHolder(contenders, 3);
    const other = contenders.find((c) => c !== holder)!;

    holder.signal('SIGSTOP');
    const acquired = await other.waitFor((e) => e.event === 'acquired', LEASE_MS + RENEW_MS + SCHEDULING_SLACK_MS + 2000);
    await other.waitFor((e) => e.event === 'work' && e.t! > acquired.t! + 2 * RENEW_MS, 5000);
    const eventsBeforeResume = holder.events.length;
    holder.signal('SIGCONT');

    const lost = await holder.waitFor((e) => e.event === 'lost', 5000, eventsBeforeResume);
    expect(lost.heldInListener).toBe(false);
    // Let the old holder run on for a while: it must keep failing to acquire and never work.
    await new Promise((r) => setTimeout(r, LEASE_MS));
    // The old holder first: once the new one releases, a still-running old holder would rightly take over.
    await holder.stop();
    await other.stop();

    expect(holder.of('acquired')).toHaveLength(1);
    expect(holder.of('lost')).toHaveLength(1);
    const lostIndex = holder.events.indexOf(lost);
    expect(holder.events.slice(lostIndex).filter((e) => e.event === 'work')).toEqual([]);
    expect(Math.max(...workStamps(holder))).toBeLessThan(acquired.t!);
    // The new holder was never disturbed by the old one waking up.
    expect(other.of('lost')).toHaveLength(0);
    expect(other.of('acquired')).toHaveLength(1);
    expect(Math.max(...workStamps(other))).toBeGreaterThan(lost.t!);
    expectNoOverlap(contenders);
  });
});

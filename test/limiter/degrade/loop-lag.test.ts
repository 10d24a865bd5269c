/**
 * The event-loop lag taken off a call's latency: the lag source on a manual clock, the breaker
 * judging a store by what it adds, and a primary call's timeout that waits again when the process
 * itself held the reply up (a real socket answer, read after a blocked loop).
 */
import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/limiter/clock.js';
import { CircuitBreaker, DegradingLimiter, EventLoopLag } from '../../../src/limiter/degrade/index.js';
import { Limiter } from '../../../src/limiter/limiter.js';
import { MemoryStore } from '../../../src/limiter/stores/memory/memory-store.js';
import type { Decision, Rule } from '../../../src/limiter/types.js';

describe('EventLoopLag', () => {
  it('adds up how late its ticks come, and the tick overdue now', () => {
    const clock = new ManualClock(1000);
    const lag = new EventLoopLag({ clock, intervalMs: 5, timer: false });
    clock.advance(5);
    lag.sample(); // on time
    expect(lag.accrued()).toBe(0);
    clock.advance(45);
    expect(lag.accrued()).toBe(40); // overdue, not yet ticked
    lag.sample();
    expect(lag.accrued()).toBe(40);
    clock.advance(3);
    expect(lag.accrued()).toBe(40);
    expect(() => new EventLoopLag({ intervalMs: 0, timer: false })).toThrow(RangeError);
  });
});

describe('CircuitBreaker with loop lag', () => {
  it('does not open for calls slow only by the loop lag accrued while they were in flight', () => {
    const clock = new ManualClock(0);
    const loopLag = new EventLoopLag({ clock, intervalMs: 5, timer: false });
    const alerts: number[] = [];
    const breaker = new CircuitBreaker({
      clock,
      loopLag,
      degradeMs: 50,
      alertMs: 10,
      minSamples: 5,
      listener: (event) => event.type === 'alert' && alerts.push(event.ms),
    });
    const plain = new CircuitBreaker({ clock, degradeMs: 50, minSamples: 5 });
    for (let i = 0; i < 10; i++) {
      const permit = breaker.acquire()!;
      const other = plain.acquire();
      // 80 ms in flight, 75 of them a loop busy elsewhere: the store took 5.
      clock.advance(80);
      loopLag.sample();
      expect(breaker.record(permit, true)).toBe(80);
      if (other) plain.record(other, true);
    }
    expect(breaker.state()).toBe('closed');
    expect(alerts).toEqual([]);
    expect(plain.state()).toBe('open');
    // A store slow by itself still counts: 80 ms in flight with the loop ticking on time.
    let slow = 0;
    for (let i = 0; i < 20; i++) {
      const permit = breaker.acquire();
      if (!permit) break;
      slow++;
      for (let t = 0; t < 16; t++) {
        clock.advance(5);
        loopLag.sample();
      }
      breaker.record(permit, true);
    }
    expect(breaker.state()).toBe('open');
    expect(alerts).toHaveLength(slow);
    expect(slow).toBeLessThan(20);
  });
});

describe('DegradingLimiter timeouts with loop lag', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((socket) => socket.on('data', () => socket.write('ok')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const RULES: Rule[] = [{ windowMs: 60_000, limit: 5 }];
  /** A primary whose answer comes over a real socket, asked, then the loop blocked for `blockMs`. */
  function primaryOverSocket(blockMs: number): Limiter {
    const limiter = new Limiter({ store: new MemoryStore() });
    const check = limiter.check.bind(limiter);
    limiter.check = (request) =>
      new Promise<Decision>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write('?');
          const until = performance.now() + blockMs;
          while (performance.now() < until) {
            // The answer arrives while the loop is busy; the timeout's timer is due before it is read.
          }
        });
        socket.once('data', () => {
          socket.destroy();
          check(request).then(resolve, reject);
        });
        socket.once('error', reject);
      });
    return limiter;
  }

  it('waits again when its timer fired late because of the loop, and times out a store that is really late', async () => {
    const loopLag = new EventLoopLag({ intervalMs: 5 });
    try {
      const lagging = new DegradingLimiter({
        primary: primaryOverSocket(150),
        local: new Limiter({ store: new MemoryStore() }),
        timeoutMs: 50,
        breaker: { loopLag },
      });
      const decision = await lagging.check({ subject: 's', rules: RULES });
      expect(decision.degraded).toBeUndefined();
      const plain = new DegradingLimiter({
        primary: primaryOverSocket(150),
        local: new Limiter({ store: new MemoryStore() }),
        timeoutMs: 50,
      });
      expect((await plain.check({ subject: 's', rules: RULES })).degraded).toBe('local');
      const hanging = new Limiter({ store: new MemoryStore() });
      hanging.check = () => new Promise<Decision>(() => undefined);
      const late = new DegradingLimiter({
        primary: hanging,
        local: new Limiter({ store: new MemoryStore() }),
        timeoutMs: 50,
        breaker: { loopLag },
      });
      expect((await late.check({ subject: 's', rules: RULES })).degraded).toBe('local');
    } finally {
      loopLag.close();
    }
  });
});

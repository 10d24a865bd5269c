import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/limiter/clock.js';
import { type BreakerEvent, CircuitBreaker, type CircuitBreakerOptions } from '../../../src/limiter/degrade/index.js';

function setup(options: Omit<CircuitBreakerOptions, 'clock' | 'listener'> = {}) {
  const clock = new ManualClock(1_000_000);
  const events: BreakerEvent[] = [];
  const breaker = new CircuitBreaker({ clock, listener: (event) => events.push(event), ...options });
  /** One call through the breaker taking `ms` on the manual clock; false if the breaker refused it. */
  const call = (ms: number, ok = true): boolean => {
    const permit = breaker.acquire();
    if (!permit) return false;
    clock.advance(ms);
    breaker.record(permit, ok);
    return true;
  };
  const states = () => events.filter((e) => e.type === 'state').map((e) => (e.type === 'state' ? e.to : ''));
  return { clock, breaker, events, call, states };
}

describe('CircuitBreaker', () => {
  it('opens after consecutive errors, not after errors separated by successes', () => {
    const { breaker, call } = setup({ consecutiveErrors: 3, minSamples: 100 });
    call(1, false);
    call(1, false);
    call(1, true);
    call(1, false);
    call(1, false);
    expect(breaker.state()).toBe('closed');
    call(1, false);
    expect(breaker.state()).toBe('open');
    expect(breaker.acquire()).toBeUndefined();
  });

  it('opens when most calls of the window are slower than degradeMs', () => {
    const { breaker, call, states } = setup({ degradeMs: 50, minSamples: 5, windowMs: 1000 });
    for (let i = 0; i < 4; i++) call(60);
    expect(breaker.state()).toBe('closed'); // fewer samples than minSamples
    call(60);
    expect(breaker.state()).toBe('open');
    expect(states()).toEqual(['open']);
  });

  it('does not open on one slow call among fast ones', () => {
    const { breaker, call } = setup({ degradeMs: 50, minSamples: 5 });
    call(500);
    for (let i = 0; i < 50; i++) call(2);
    call(500);
    expect(breaker.state()).toBe('closed');
  });

  it('forgets slow calls that left the window', () => {
    const { breaker, call, clock } = setup({ degradeMs: 50, minSamples: 5, windowMs: 1000 });
    // Each slow call is 400 ms after the previous: at most three share a one-second window.
    for (let i = 0; i < 20; i++) {
      call(60);
      clock.advance(340);
    }
    expect(breaker.state()).toBe('closed');
  });

  it('badRatio 0.1 opens when the p90 is above degradeMs', () => {
    const { breaker, call } = setup({ degradeMs: 50, minSamples: 20, badRatio: 0.1 });
    for (let i = 0; i < 17; i++) call(1);
    call(60);
    call(60);
    expect(breaker.state()).toBe('closed'); // 2 of 19 slow, and below minSamples
    call(60); // 3 of 20 = 15%
    expect(breaker.state()).toBe('open');
  });

  it('stays open for openMs, then lets only a few probes through', () => {
    const { breaker, call, clock } = setup({ consecutiveErrors: 1, openMs: 2000, probes: 2 });
    call(1, false);
    expect(breaker.state()).toBe('open');
    clock.advance(1999); // open since the failing call ended
    expect(breaker.remainingOpenMs()).toBe(1);
    expect(breaker.acquire()).toBeUndefined();
    clock.advance(1);
    expect(breaker.state()).toBe('half-open');
    const a = breaker.acquire();
    const b = breaker.acquire();
    expect(a?.probe).toBe(true);
    expect(b?.probe).toBe(true);
    expect(breaker.acquire()).toBeUndefined();
  });

  it('closes when the probes succeed fast', () => {
    const { breaker, call, clock, states } = setup({ consecutiveErrors: 1, openMs: 100, probes: 3 });
    call(1, false);
    clock.advance(100);
    expect(call(2)).toBe(true);
    expect(call(2)).toBe(true);
    expect(breaker.state()).toBe('half-open');
    expect(call(2)).toBe(true);
    expect(breaker.state()).toBe('closed');
    expect(states()).toEqual(['open', 'half-open', 'closed']);
  });

  it('re-opens when a probe fails or is slow', () => {
    const { breaker, call, clock, states } = setup({ consecutiveErrors: 1, openMs: 100, degradeMs: 50 });
    call(1, false);
    clock.advance(100);
    call(1, false);
    expect(breaker.state()).toBe('open');
    clock.advance(100);
    call(2);
    call(80); // slow probe
    expect(breaker.state()).toBe('open');
    expect(states()).toEqual(['open', 'half-open', 'open', 'half-open', 'open']);
  });

  it('starts a closed breaker with an empty window', () => {
    const { breaker, call, clock } = setup({ consecutiveErrors: 100, minSamples: 5, openMs: 100, probes: 1 });
    for (let i = 0; i < 5; i++) call(60);
    expect(breaker.state()).toBe('open');
    clock.advance(100);
    call(1);
    expect(breaker.state()).toBe('closed');
    for (let i = 0; i < 4; i++) call(60); // would open if the old slow calls still counted
    expect(breaker.state()).toBe('closed');
  });

  it('ignores results of calls started before the last state change', () => {
    const { breaker, call, clock } = setup({ consecutiveErrors: 1, openMs: 100, probes: 1 });
    const stale = breaker.acquire()!;
    call(1, false);
    clock.advance(100);
    expect(breaker.state()).toBe('half-open');
    breaker.record(stale, true); // must not count as the probe
    expect(breaker.state()).toBe('half-open');
    const staleFailure = breaker.acquire()!;
    breaker.record(staleFailure, true);
    expect(breaker.state()).toBe('closed');
  });

  it('reports calls slower than alertMs without changing state', () => {
    const { breaker, call, events } = setup({ alertMs: 10, degradeMs: 50 });
    call(5);
    call(11);
    call(30);
    expect(events).toEqual([
      { type: 'alert', ms: 11 },
      { type: 'alert', ms: 30 },
    ]);
    expect(breaker.state()).toBe('closed');
  });

  it('survives a throwing listener', () => {
    const breaker = new CircuitBreaker({
      clock: new ManualClock(),
      consecutiveErrors: 1,
      listener: () => {
        throw new Error('listener bug');
      },
    });
    breaker.record(breaker.acquire()!, false);
    expect(breaker.state()).toBe('open');
  });

  it('rejects nonsense thresholds', () => {
    expect(() => new CircuitBreaker({ degradeMs: 0 })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ badRatio: 1.5 })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ probes: 0.5 })).toThrow(RangeError);
  });
});

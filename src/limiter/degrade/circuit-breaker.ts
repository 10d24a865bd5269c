/**
 * A circuit breaker fed with the latency and success of every call to the primary store (Redis).
 *
 * States (DESIGN.md §7, docs/degradation.md):
 * - `closed`: every call goes to the primary. Each call's result lands in a sliding window of
 *   `windowMs` (ten buckets, so memory stays constant at any rate). The breaker opens when
 *   - `consecutiveErrors` calls in a row failed (an outage is caught after a handful of calls,
 *     whatever the traffic), or
 *   - the window holds at least `minSamples` calls and the share of bad calls (failed, or slower
 *     than `degradeMs`) is at least `badRatio`. With the default 0.5 this reads "most calls of the
 *     last second were slow"; 0.1 reads "the p90 latency is above `degradeMs`". One slow call never
 *     opens the breaker.
 * - `open`: no call goes to the primary for `openMs`; callers use their fallback.
 * - `half-open`: after `openMs` up to `probes` calls go to the primary; the others still use the
 *   fallback. When that many probes succeed within `degradeMs` the breaker closes (with an empty
 *   window); the first probe that fails or is slow opens it again for another `openMs`.
 *
 * Calls slower than `alertMs` are reported to the listener as `alert` events (the service counts
 * them and logs a warning); they change nothing.
 *
 * With `loopLag`, a call's latency counts without the lateness its own process's event loop
 * accrued while the call was in flight (loop-lag.ts): a busy process is not a slow store.
 *
 * Results of calls admitted before the last state change are ignored: a call that started while
 * closed and ends after the breaker opened must not close or re-open it.
 */
import type { Clock } from '../clock.js';
import type { LoopLagSource } from './loop-lag.js';

export type BreakerState = 'closed' | 'half-open' | 'open';

export type BreakerEvent = { type: 'state'; from: BreakerState; to: BreakerState } | { type: 'alert'; ms: number };

export type BreakerListener = (event: BreakerEvent) => void;

export interface CircuitBreakerOptions {
  /**
   * Source of milliseconds for windows, the open period and latencies. Only differences are used,
   * so a monotonic clock is best (the default: `performance.now()`); tests pass a ManualClock.
   */
  clock?: Clock;
  /** A call slower than this is reported as an `alert` event. Default 10. */
  alertMs?: number;
  /** A call slower than this counts as bad. Default 50. */
  degradeMs?: number;
  /** Length of the sliding window of recent calls. Default 1000. */
  windowMs?: number;
  /** Calls the window must hold before its bad-call share is trusted. Default 5. */
  minSamples?: number;
  /** Share of bad calls in the window (0 < r ≤ 1) that opens the breaker. Default 0.5. */
  badRatio?: number;
  /** Failed calls in a row that open the breaker. Default 3. */
  consecutiveErrors?: number;
  /** How long the breaker stays open before probing. Default 2000. */
  openMs?: number;
  /** Probe calls let through while half-open; that many fast successes close it. Default 3. */
  probes?: number;
  /** Receives state changes and alerts. Must not throw (a throwing listener is ignored). */
  listener?: BreakerListener;
  /** The process's own event-loop lateness, taken off every call's latency (default none: latency as measured). */
  loopLag?: LoopLagSource;
}

/** Permission to call the primary; hand it back to {@link CircuitBreaker.record}. */
export interface BreakerPermit {
  /** The breaker generation that issued it: results of older generations are ignored. */
  readonly generation: number;
  readonly probe: boolean;
  /** Clock reading when the permit was issued. */
  readonly startedAt: number;
  /** `loopLag.accrued()` when the permit was issued (0 without one). */
  readonly lagAtStart: number;
}

/** A clock for latencies: monotonic and sub-millisecond. */
export const monotonicClock: Clock = { now: () => performance.now() };

const BUCKETS = 10;

export class CircuitBreaker {
  readonly clock: Clock;
  readonly alertMs: number;
  readonly degradeMs: number;
  readonly windowMs: number;
  readonly minSamples: number;
  readonly badRatio: number;
  readonly consecutiveErrors: number;
  readonly openMs: number;
  readonly loopLag: LoopLagSource | undefined;
  readonly probes: number;
  private readonly listener: BreakerListener | undefined;

  private current: BreakerState = 'closed';
  /** Incremented on every state change. */
  private generation = 0;
  private openedAt = 0;
  private errorsInARow = 0;
  private probesIssued = 0;
  private probesPassed = 0;
  private readonly bucketMs: number;
  /** Ring of buckets: slot (k mod BUCKETS) holds bucket k's counts while `bucketIds` says k (NaN: empty). */
  private readonly bucketIds = new Float64Array(BUCKETS).fill(Number.NaN);
  private readonly totals = new Uint32Array(BUCKETS);
  private readonly bads = new Uint32Array(BUCKETS);

  constructor(options: CircuitBreakerOptions = {}) {
    this.clock = options.clock ?? monotonicClock;
    this.alertMs = positive(options.alertMs ?? 10, 'alertMs');
    this.degradeMs = positive(options.degradeMs ?? 50, 'degradeMs');
    this.windowMs = positive(options.windowMs ?? 1000, 'windowMs');
    this.minSamples = positiveInt(options.minSamples ?? 5, 'minSamples');
    this.badRatio = options.badRatio ?? 0.5;
    if (!(this.badRatio > 0 && this.badRatio <= 1)) throw new RangeError('badRatio must be in (0, 1]');
    this.consecutiveErrors = positiveInt(options.consecutiveErrors ?? 3, 'consecutiveErrors');
    this.openMs = positive(options.openMs ?? 2000, 'openMs');
    this.probes = positiveInt(options.probes ?? 3, 'probes');
    this.listener = options.listener;
    this.loopLag = options.loopLag;
    this.bucketMs = this.windowMs / BUCKETS;
  }

  /** The state now (an open breaker whose `openMs` has passed reads as `half-open`). */
  state(): BreakerState {
    this.advance();
    return this.current;
  }

  /** Milliseconds until an open breaker will let probes through; 0 unless open. */
  remainingOpenMs(): number {
    this.advance();
    return this.current === 'open' ? Math.max(0, this.openedAt + this.openMs - this.clock.now()) : 0;
  }

  /**
   * Whether to call the primary now: a permit to pass to {@link record} after the call, or
   * `undefined` when the caller must use its fallback. Every permit must be recorded exactly once
   * (so every call needs a timeout): a half-open breaker waits for its probes' results.
   */
  acquire(): BreakerPermit | undefined {
    this.advance();
    const lagAtStart = this.loopLag?.accrued() ?? 0;
    if (this.current === 'closed') return { generation: this.generation, probe: false, startedAt: this.clock.now(), lagAtStart };
    if (this.current === 'half-open' && this.probesIssued < this.probes) {
      this.probesIssued++;
      return { generation: this.generation, probe: true, startedAt: this.clock.now(), lagAtStart };
    }
    return undefined;
  }

  /**
   * Reports the outcome of a call made under `permit`: `ok` false for an error or a timeout.
   * Returns the call's latency in milliseconds (clock now − permit start); alerts and the
   * slow-call judgement use it less the loop lag accrued meanwhile ({@link storeMs}).
   */
  record(permit: BreakerPermit, ok: boolean): number {
    const now = this.clock.now();
    const ms = now - permit.startedAt;
    const storeMs = this.storeMs(permit, ms);
    if (storeMs > this.alertMs) this.emit({ type: 'alert', ms: storeMs });
    if (permit.generation !== this.generation) return ms;
    const bad = !ok || storeMs > this.degradeMs;
    if (this.current === 'half-open') {
      if (bad) this.open(now);
      else if (++this.probesPassed >= this.probes) this.transition('closed');
      return ms;
    }
    // closed
    this.errorsInARow = ok ? 0 : this.errorsInARow + 1;
    const { total, badCount } = this.count(now, bad);
    if (this.errorsInARow >= this.consecutiveErrors || (total >= this.minSamples && badCount >= this.badRatio * total)) {
      this.open(now);
    }
    return ms;
  }

  /** The part of `ms`, a call's latency under `permit`, that the store answers for: without the loop lag accrued since the permit. */
  storeMs(permit: BreakerPermit, ms: number): number {
    return this.loopLag === undefined ? ms : Math.max(0, ms - (this.loopLag.accrued() - permit.lagAtStart));
  }

  /** Adds one call to the window at `now` and returns the window's totals. */
  private count(now: number, bad: boolean): { total: number; badCount: number } {
    const k = Math.floor(now / this.bucketMs);
    const slot = ((k % BUCKETS) + BUCKETS) % BUCKETS;
    if (this.bucketIds[slot] !== k) {
      this.bucketIds[slot] = k;
      this.totals[slot] = 0;
      this.bads[slot] = 0;
    }
    this.totals[slot]! += 1;
    if (bad) this.bads[slot]! += 1;
    let total = 0;
    let badCount = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const id = this.bucketIds[i]!;
      if (id > k - BUCKETS && id <= k) {
        total += this.totals[i]!;
        badCount += this.bads[i]!;
      }
    }
    return { total, badCount };
  }

  private advance(): void {
    if (this.current === 'open' && this.clock.now() - this.openedAt >= this.openMs) this.transition('half-open');
  }

  private open(now: number): void {
    this.openedAt = now;
    this.transition('open');
  }

  private transition(to: BreakerState): void {
    const from = this.current;
    this.current = to;
    this.generation++;
    this.errorsInARow = 0;
    this.probesIssued = 0;
    this.probesPassed = 0;
    if (to === 'closed') this.bucketIds.fill(Number.NaN);
    if (from !== to) this.emit({ type: 'state', from, to });
  }

  private emit(event: BreakerEvent): void {
    try {
      this.listener?.(event);
    } catch {
      // A broken listener must not break decisions.
    }
  }
}

function positive(value: number, name: string): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be a positive number`);
  return value;
}

function positiveInt(value: number, name: string): number {
  if (!(Number.isInteger(value) && value > 0)) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

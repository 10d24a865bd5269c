/**
 * Per-subject state of the counting algorithms other than sliding-log, with the formulas of
 * src/limiter/types.ts. State is identified by what it counts, not by rule index, so a reordered
 * or extended rule set keeps its counts: fixed-window by window, sliding-counter by bucket size,
 * token-bucket by (window, limit).
 */
import type { Algorithm } from '../../types.js';

/** Buckets a sliding counter keeps: the 10 of the window and the one before it. */
const BUCKETS = 11;

abstract class CounterBase {
  /** The check that last updated it: an admission updates shared state once. */
  stamp = -1;
  abstract readonly algorithm: Algorithm;
  constructor(
    readonly windowMs: number,
    readonly limit: number,
  ) {}
}

/** Admitted count of the latest window k = floor(t / w) that saw an admission. */
export class FixedWindowCounter extends CounterBase {
  readonly algorithm = 'fixed-window';
  window = Number.NaN;
  count = 0;

  countAt(t: number): number {
    return Math.floor(t / this.windowMs) === this.window ? this.count : 0;
  }

  admit(t: number): void {
    const window = Math.floor(t / this.windowMs);
    if (window === this.window) this.count++;
    else {
      this.window = window;
      this.count = 1;
    }
  }

  undo(a: number): void {
    if (Math.floor(a / this.windowMs) === this.window && this.count > 0) this.count--;
  }
}

/** Eleven buckets of b = ceil(w / 10) ms in a ring; slot j % 11 holds bucket j when `buckets[slot] === j`. */
export class SlidingCounter extends CounterBase {
  readonly algorithm = 'sliding-counter';
  readonly bucketMs: number;
  private readonly buckets = new Float64Array(BUCKETS).fill(Number.NaN);
  private readonly counts = new Float64Array(BUCKETS);
  /** Set by {@link weightedAt}: t − k·b. */
  offset = 0;

  constructor(windowMs: number, limit: number) {
    super(windowMs, limit);
    this.bucketMs = Math.ceil(windowMs / 10);
  }

  private countOf(bucket: number): number {
    const slot = ((bucket % BUCKETS) + BUCKETS) % BUCKETS;
    return this.buckets[slot] === bucket ? this.counts[slot]! : 0;
  }

  /** S·b + c·(b − m), the weighted count times b; also sets {@link offset} to m. */
  weightedAt(t: number): number {
    const b = this.bucketMs;
    const k = Math.floor(t / b);
    const m = t - k * b;
    this.offset = m;
    let sum = 0;
    for (let bucket = k - 9; bucket <= k; bucket++) sum += this.countOf(bucket);
    return sum * b + this.countOf(k - 10) * (b - m);
  }

  admit(t: number): void {
    const bucket = Math.floor(t / this.bucketMs);
    const slot = ((bucket % BUCKETS) + BUCKETS) % BUCKETS;
    if (this.buckets[slot] === bucket) this.counts[slot]!++;
    else {
      this.buckets[slot] = bucket;
      this.counts[slot] = 1;
    }
  }

  undo(a: number): void {
    const bucket = Math.floor(a / this.bucketMs);
    const slot = ((bucket % BUCKETS) + BUCKETS) % BUCKETS;
    if (this.buckets[slot] === bucket && this.counts[slot]! > 0) this.counts[slot]!--;
  }
}

/** GCRA: one theoretical arrival time. */
export class TokenBucket extends CounterBase {
  readonly algorithm = 'token-bucket';
  /** T = w / limit. */
  readonly interval: number;
  /** NaN: absent. */
  tat = Number.NaN;

  constructor(windowMs: number, limit: number) {
    super(windowMs, limit);
    this.interval = windowMs / limit;
  }

  /** x = max(tat, t), tat absent counting as t. */
  arrivalAt(t: number): number {
    return Number.isNaN(this.tat) ? t : Math.max(this.tat, t);
  }

  admit(t: number): void {
    this.tat = this.arrivalAt(t) + this.interval;
  }

  undo(a: number): void {
    if (Number.isNaN(this.tat)) return;
    this.tat = Math.max(this.tat - this.interval, a);
  }
}

export type Counter = FixedWindowCounter | SlidingCounter | TokenBucket;

/** The state a rule counts with, among `counters`; undefined when none exists yet. */
export function findCounter(
  counters: readonly Counter[] | undefined,
  algorithm: Algorithm,
  windowMs: number,
  limit: number,
): Counter | undefined {
  if (!counters) return undefined;
  for (let index = 0; index < counters.length; index++) {
    const counter = counters[index]!;
    if (counter.algorithm !== algorithm) continue;
    if (
      algorithm === 'fixed-window'
        ? counter.windowMs === windowMs
        : algorithm === 'sliding-counter'
          ? (counter as SlidingCounter).bucketMs === Math.ceil(windowMs / 10)
          : counter.windowMs === windowMs && counter.limit === limit
    ) {
      return counter;
    }
  }
  return undefined;
}

export function createCounter(algorithm: Algorithm, windowMs: number, limit: number): Counter {
  switch (algorithm) {
    case 'fixed-window':
      return new FixedWindowCounter(windowMs, limit);
    case 'sliding-counter':
      return new SlidingCounter(windowMs, limit);
    case 'token-bucket':
      return new TokenBucket(windowMs, limit);
    default:
      throw new RangeError(`${algorithm} keeps no counter`);
  }
}

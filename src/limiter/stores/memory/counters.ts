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

/**
 * Admitted count per window k = floor(t / w), kept as check-batch.lua keeps its hash fields: the
 * newest window written, whose count is dropped when a newer window is written, and windows written
 * while a newer one was already stored (times gone back), which stay until the subject is evicted.
 */
export class FixedWindowCounter extends CounterBase {
  readonly algorithm = 'fixed-window';
  /** The newest window written; NaN: none yet. */
  window = Number.NaN;
  /** Admitted in {@link window}. */
  count = 0;
  /** Windows older than {@link window} written after it (allocated on the first). */
  private older: Map<number, number> | undefined;

  countAt(t: number): number {
    const window = Math.floor(t / this.windowMs);
    if (window === this.window) return this.count;
    return this.older?.get(window) ?? 0;
  }

  admit(t: number): void {
    const window = Math.floor(t / this.windowMs);
    if (window === this.window) this.count++;
    else if (!(window < this.window)) {
      // The first window, or a newer one: the one it replaces no longer counts at any later time.
      this.window = window;
      this.count = 1;
    } else {
      // Writing this older window into `window`'s place would lose the newer count.
      this.older ??= new Map();
      this.older.set(window, (this.older.get(window) ?? 0) + 1);
    }
  }

  undo(a: number): void {
    const window = Math.floor(a / this.windowMs);
    if (window === this.window) {
      if (this.count > 0) this.count--;
      return;
    }
    const count = this.older?.get(window);
    if (count !== undefined && count > 0) this.older!.set(window, count - 1);
  }
}

/**
 * Bucket counts of b = ceil(w / 10) ms, kept as check-batch.lua keeps its hash fields: with n the
 * newest bucket written, buckets n − 10..n are kept and the ones a newer n leaves behind are
 * dropped; a bucket written below n − 10 (a time gone back that far) stays until the subject is
 * evicted. The kept range lives in a ring of 11 slots (slot j % 11 holds bucket j when
 * `buckets[slot] === j` and j ≥ n − 10: a tag below that is a dropped bucket), the rest in a map.
 */
export class SlidingCounter extends CounterBase {
  readonly algorithm = 'sliding-counter';
  readonly bucketMs: number;
  private readonly buckets = new Float64Array(BUCKETS).fill(Number.NaN);
  private readonly counts = new Float64Array(BUCKETS);
  /** n, the newest bucket written; NaN: none yet. */
  private newest = Number.NaN;
  /** Buckets below n − 10 when written (allocated on the first). */
  private older: Map<number, number> | undefined;
  /** Set by {@link weightedAt}: t − k·b. */
  offset = 0;

  constructor(windowMs: number, limit: number) {
    super(windowMs, limit);
    this.bucketMs = Math.ceil(windowMs / 10);
  }

  /** The ring slot of `bucket` when it is stored there, else -1. */
  private storedSlot(bucket: number): number {
    // A comparison with NaN is false: nothing is kept before the first admission.
    if (!(bucket >= this.newest - (BUCKETS - 1))) return -1;
    const slot = slotOf(bucket);
    return this.buckets[slot] === bucket ? slot : -1;
  }

  private countOf(bucket: number): number {
    const slot = this.storedSlot(bucket);
    if (slot >= 0) return this.counts[slot]!;
    return this.older?.get(bucket) ?? 0;
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
    if (bucket < this.newest - (BUCKETS - 1)) {
      // Below the kept range: its slot holds a bucket that still counts.
      this.older ??= new Map();
      this.older.set(bucket, (this.older.get(bucket) ?? 0) + 1);
      return;
    }
    if (!(bucket <= this.newest)) this.newest = bucket;
    const slot = slotOf(bucket);
    if (this.buckets[slot] === bucket) this.counts[slot]!++;
    else {
      // The slot's tag, if any, is a bucket below the kept range: dropped, as check-batch.lua drops it.
      this.buckets[slot] = bucket;
      this.counts[slot] = 1;
    }
  }

  undo(a: number): void {
    const bucket = Math.floor(a / this.bucketMs);
    const slot = this.storedSlot(bucket);
    if (slot >= 0) {
      if (this.counts[slot]! > 0) this.counts[slot]!--;
      return;
    }
    const count = this.older?.get(bucket);
    if (count !== undefined && count > 0) this.older!.set(bucket, count - 1);
  }
}

/** Slot of a bucket in the ring; a store called directly may pass a time before 1970. */
function slotOf(bucket: number): number {
  return ((bucket % BUCKETS) + BUCKETS) % BUCKETS;
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

import type { NormalizedRule } from './types.js';

/**
 * The first count time `u ≥ start` at which recording one more entry leaves every window of every
 * sliding-log rule within its limit (the `dueAt` of a deferred check: src/limiter/types.ts,
 * `deferUntil`), given the subject's log: `count` entry times, ascending, read by `at(i)`.
 *
 * A window (v − w, v] contains `u` when v ∈ [u, u + w). It holds `limit` entries when some run of
 * `limit` consecutive entries e_i ≤ … ≤ e_j (j = i + limit − 1) fits in it: e_j ≤ v and
 * e_i > v − w. Such a v exists in [u, u + w) exactly when e_j − e_i < w and
 * u ∈ [e_j − w + 1, e_i + w − 1] (integer milliseconds). So each rule blocks a union of closed
 * intervals, one per run, and `u` is the first time at or after `start` outside all of them:
 * sorted by their start, one sweep. O(entries × sliding-log rules) to collect, plus the sort.
 * Counter algorithms are not looked at (they count at the decision time; see types.ts).
 */
export function firstAdmitted(rules: readonly NormalizedRule[], at: (index: number) => number, count: number, start: number): number {
  const lows: number[] = [];
  const highs: number[] = [];
  for (const rule of rules) {
    if (rule.algorithm !== 'sliding-log') continue;
    const { windowMs: w, limit } = rule;
    for (let i = 0, j = limit - 1; j < count; i++, j++) {
      const first = at(i);
      const last = at(j);
      // A run ending before start − w blocks nothing at or after start.
      if (last - first < w && first + w - 1 >= start) {
        lows.push(last - w + 1);
        highs.push(first + w - 1);
      }
    }
  }
  const order = lows.map((_, index) => index).sort((x, y) => lows[x]! - lows[y]!);
  let u = start;
  for (const index of order) {
    if (lows[index]! > u) break;
    if (highs[index]! >= u) u = highs[index]! + 1;
  }
  return u;
}

import { RequestIds } from './request-ids.js';

/**
 * One subject's log: admitted times in ascending order, with the request id of each entry when
 * ids are used. Trimming moves a start index (amortised O(1) per entry) and compacts the array
 * only when the dead prefix is the larger half, so the hot path allocates nothing.
 */
export class SubjectLog {
  private times: number[] = [];
  /** Index of the oldest live entry; entries before it are trimmed. */
  private start = 0;
  /** The request id of each position of `times`, indexed; allocated on the first id. */
  private ids: RequestIds | undefined;

  /** Live entries. */
  get size(): number {
    return this.times.length - this.start;
  }

  /** Absolute index one past the newest entry. */
  get end(): number {
    return this.times.length;
  }

  /**
   * The oldest and newest live times (+Infinity and -Infinity when empty), kept beside `start` so the
   * trim's and the counts' quick tests read this object, not the array's far ends: for a subject
   * picked at random each of those is a cache miss.
   */
  private oldest = Number.POSITIVE_INFINITY;
  private latest = Number.NEGATIVE_INFINITY;

  /** Time of the newest entry; -Infinity when empty. */
  get newest(): number {
    return this.latest;
  }

  /** Time at an absolute index returned by {@link upperBound}. */
  at(index: number): number {
    return this.times[index]!;
  }

  /** First absolute index whose time is > `time`. */
  upperBound(time: number): number {
    const times = this.times;
    let low = this.start;
    let high = times.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (times[middle]! <= time) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * Cursors: per window length (up to 8), the index its last count started at. Times mostly move
   * forward, so the next start is that one or a few entries later: a short walk instead of a binary
   * search over the whole log (which, for a large limit, misses the cache at nearly every probe).
   * Dropped whenever entries move (splice, compaction, removal); a trim only moves `start`.
   */
  private cursorWindows: number[] | undefined;
  private cursorIndexes: number[] | undefined;

  /** {@link upperBound} of `time` (= a − `window`), found from the cursor of `window`. */
  windowStart(window: number, time: number): number {
    const times = this.times;
    const start = this.start;
    const end = times.length;
    // The whole log is in the window (the common case of a short log).
    if (this.oldest > time) return start;
    if (!this.cursorWindows) {
      this.cursorWindows = [];
      this.cursorIndexes = [];
    }
    const windows = this.cursorWindows;
    const indexes = this.cursorIndexes!;
    const slot = windows.indexOf(window);
    if (slot < 0) {
      const found = this.upperBound(time);
      if (windows.length < 8) {
        windows.push(window);
        indexes.push(found);
      }
      return found;
    }
    let index = indexes[slot]!;
    if (index < start) index = start;
    else if (index > end) index = end;
    if (index > start && times[index - 1]! > time) {
      index = this.upperBound(time);
    } else {
      const limit = index + 16;
      while (index < end && times[index]! <= time) {
        if (++index === limit) {
          index = this.upperBound(time);
          break;
        }
      }
    }
    indexes[slot] = index;
    return index;
  }

  private dropCursors(): void {
    if (this.cursorWindows) {
      this.cursorWindows.length = 0;
      this.cursorIndexes!.length = 0;
    }
  }

  /** Set by {@link windowMax}: its retry delay, -1 when no window was full. */
  windowRetry = -1;

  /**
   * The sliding-log count of an attempt at `a` when entries later than `a` exist (types.ts): the
   * most entries in a window (u − w, u] over u = a and the entry times in (a, a + w); a window
   * holding ≥ `limit` is full, and {@link windowRetry} becomes the largest of
   * (its (n − limit + 1)-th oldest entry) + w − u over the full ones. One pass over (a − w, a + w).
   */
  windowMax(a: number, w: number, limit: number): number {
    const times = this.times;
    const end = times.length;
    let low = this.upperBound(a - w);
    let high = this.upperBound(a);
    let u = a;
    let best = 0;
    let retry = -1;
    for (;;) {
      const count = high - low;
      if (count > best) best = count;
      if (count >= limit) {
        const r = times[high - limit]! + w - u;
        if (r > retry) retry = r;
      }
      if (high === end || times[high]! >= a + w) break;
      u = times[high]!;
      while (high < end && times[high] === u) high++;
      while (times[low]! <= u - w) low++;
    }
    this.windowRetry = retry;
    return best;
  }

  has(requestId: string): boolean {
    return this.ids !== undefined && this.ids.indexOf(requestId, this.start) >= 0;
  }

  /** Time of the entry of `requestId`, or undefined when it is not in the log (index lookup, no trim). */
  timeOf(requestId: string): number | undefined {
    const position = this.ids === undefined ? -1 : this.ids.indexOf(requestId, this.start);
    return position < 0 ? undefined : this.times[position];
  }

  /** The newest `max` live entries, oldest first, as [time, request id or null] (a snapshot's). */
  newestEntries(max: number): [number, string | null][] {
    const entries: [number, string | null][] = [];
    for (let index = Math.max(this.start, this.times.length - max); index < this.times.length; index++)
      entries.push([this.times[index]!, this.ids?.at(index) ?? null]);
    return entries;
  }

  /** Drops every entry with time ≤ `horizon`. */
  trim(horizon: number): void {
    const times = this.times;
    const end = times.length;
    if (this.oldest > horizon) return;
    const cut = this.upperBound(horizon);
    // The ids of trimmed entries need no work until a compaction (their index slots go stale).
    if (cut === end) {
      this.dropCursors();
      times.length = 0;
      this.ids?.compact(end);
      this.start = 0;
    } else if (cut > 32 && cut * 2 > end) {
      this.dropCursors();
      times.copyWithin(0, cut);
      times.length = end - cut;
      this.ids?.compact(cut);
      this.start = 0;
    } else {
      this.start = cut;
    }
    this.bounds();
  }

  /** Sets {@link oldest} and {@link latest} from the array. */
  private bounds(): void {
    const times = this.times;
    if (times.length > this.start) {
      this.oldest = times[this.start]!;
      this.latest = times[times.length - 1]!;
    } else {
      this.oldest = Number.POSITIVE_INFINITY;
      this.latest = Number.NEGATIVE_INFINITY;
    }
  }

  /** Records an entry, keeping the order when `time` is older than the newest (times may go backwards). */
  insert(time: number, requestId: string | undefined): void {
    const times = this.times;
    if (requestId !== undefined && !this.ids) this.ids = new RequestIds(times.length);
    const ids = this.ids;
    if (this.latest <= time) {
      times.push(time);
      ids?.append(requestId, this.start);
      this.latest = time;
      if (this.oldest === Number.POSITIVE_INFINITY) this.oldest = time;
    } else {
      const index = this.upperBound(time);
      this.dropCursors();
      times.splice(index, 0, time);
      ids?.insertAt(index, requestId, this.start);
      if (time < this.oldest) this.oldest = time;
    }
  }

  /** Removes the entry of `requestId`; returns its time, or undefined when it is not in the log. */
  remove(requestId: string): number | undefined {
    const index = this.ids === undefined ? -1 : this.ids.indexOf(requestId, this.start);
    if (index < 0) return undefined;
    const time = this.times[index]!;
    this.dropCursors();
    this.times.splice(index, 1);
    this.ids!.removeAt(index);
    this.bounds();
    return time;
  }
}

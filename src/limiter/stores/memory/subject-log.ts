/**
 * One subject's log: admitted times in ascending order, with the request id of each entry when
 * ids are used. Trimming moves a start index (amortised O(1) per entry) and compacts the array
 * only when the dead prefix is the larger half, so the hot path allocates nothing.
 */
export class SubjectLog {
  private times: number[] = [];
  /** Index of the oldest live entry; entries before it are trimmed. */
  private start = 0;
  /** `ids[i]` is the request id of `times[i]`; allocated on the first id. */
  private ids: (string | undefined)[] | undefined;
  /** Request id → its entry's time, for the idempotency check and undo. */
  private idTimes: Map<string, number> | undefined;

  /** Live entries. */
  get size(): number {
    return this.times.length - this.start;
  }

  /** Absolute index one past the newest entry. */
  get end(): number {
    return this.times.length;
  }

  /** Time of the newest entry; -Infinity when empty. */
  get newest(): number {
    return this.times.length > this.start ? this.times[this.times.length - 1]! : Number.NEGATIVE_INFINITY;
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
    return this.idTimes?.has(requestId) === true;
  }

  /** Time of the entry of `requestId`, or undefined when it is not in the log (map lookup, no trim). */
  timeOf(requestId: string): number | undefined {
    return this.idTimes?.get(requestId);
  }

  /** Drops every entry with time ≤ `horizon`. */
  trim(horizon: number): void {
    const times = this.times;
    const start = this.start;
    const end = times.length;
    if (start === end || times[start]! > horizon) return;
    const cut = this.upperBound(horizon);
    const ids = this.ids;
    if (ids) {
      for (let index = start; index < cut; index++) {
        const id = ids[index];
        if (id !== undefined) this.idTimes!.delete(id);
      }
    }
    if (cut === end) {
      times.length = 0;
      if (ids) ids.length = 0;
      this.start = 0;
    } else if (cut > 32 && cut * 2 > end) {
      times.copyWithin(0, cut);
      times.length = end - cut;
      if (ids) {
        ids.copyWithin(0, cut);
        ids.length = end - cut;
      }
      this.start = 0;
    } else {
      this.start = cut;
    }
  }

  /** Records an entry, keeping the order when `time` is older than the newest (times may go backwards). */
  insert(time: number, requestId: string | undefined): void {
    const times = this.times;
    if (requestId !== undefined && !this.ids) {
      this.ids = new Array<string | undefined>(times.length).fill(undefined);
      this.idTimes = new Map();
    }
    const ids = this.ids;
    if (times.length === this.start || times[times.length - 1]! <= time) {
      times.push(time);
      ids?.push(requestId);
    } else {
      const index = this.upperBound(time);
      times.splice(index, 0, time);
      ids?.splice(index, 0, requestId);
    }
    if (requestId !== undefined) this.idTimes!.set(requestId, time);
  }

  /** Removes the entry of `requestId`; returns its time, or undefined when it is not in the log. */
  remove(requestId: string): number | undefined {
    const time = this.idTimes?.get(requestId);
    if (time === undefined) return undefined;
    const ids = this.ids!;
    let index = this.upperBound(time) - 1;
    while (index >= this.start && ids[index] !== requestId) index--;
    this.times.splice(index, 1);
    ids.splice(index, 1);
    this.idTimes!.delete(requestId);
    return time;
  }
}

/**
 * Cleanup deadlines of the store's subjects in one dense array, inspected a few per check in a
 * round: the sweep reads consecutive doubles (eight to a cache line) and touches a subject's state
 * only when it has expired, where walking the subjects themselves missed the cache at each one.
 * Removal moves the last entry into the freed place, so every operation is O(1).
 */
export interface Swept {
  /** Index in {@link Deadlines}; -1 when not held. */
  sweepSlot: number;
}

export class Deadlines<T extends Swept> {
  private items: T[] = [];
  private times = new Float64Array(64);
  private cursor = 0;

  get size(): number {
    return this.items.length;
  }

  add(item: T, deadline: number): void {
    const slot = this.items.length;
    if (slot === this.times.length) {
      const times = new Float64Array(slot * 2);
      times.set(this.times);
      this.times = times;
    }
    this.items.push(item);
    this.times[slot] = deadline;
    item.sweepSlot = slot;
  }

  set(item: T, deadline: number): void {
    this.times[item.sweepSlot] = deadline;
  }

  remove(item: T): void {
    const slot = item.sweepSlot;
    const last = this.items.length - 1;
    const moved = this.items[last]!;
    this.items[slot] = moved;
    this.times[slot] = this.times[last]!;
    moved.sweepSlot = slot;
    this.items.pop();
    item.sweepSlot = -1;
  }

  /**
   * Inspects the next item of the round: returns it when its deadline is ≤ `now` (the caller removes
   * it, and the item moved into its place is inspected next), else moves on and returns undefined.
   */
  next(now: number): T | undefined {
    const count = this.items.length;
    if (count === 0) return undefined;
    if (this.cursor >= count) this.cursor = 0;
    const slot = this.cursor;
    if (this.times[slot]! <= now) return this.items[slot];
    this.cursor = slot + 1;
    return undefined;
  }

  clear(): void {
    this.items.length = 0;
    this.cursor = 0;
  }
}

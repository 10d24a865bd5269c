/**
 * Collects work issued in the same turn of the event loop and hands it over in groups: one
 * group per Redis Cluster slot (a script may only touch keys of one slot; a standalone server
 * is one group). A group is sent when it reaches `maxBatch` items, the rest on the next
 * `setImmediate`, i.e. after every callback of the current I/O phase has had its chance to add
 * work. Items keep their order within a group.
 */
export class Batcher<T> {
  private readonly groups = new Map<number, T[]>();
  private scheduled = false;

  constructor(
    private readonly send: (items: T[]) => void,
    private readonly maxBatch: number,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError('maxBatch must be a positive integer');
  }

  /** Queues `item` in `group`; sends the group at once when it is full. */
  add(group: number, item: T): void {
    let items = this.groups.get(group);
    if (items === undefined) {
      items = [];
      this.groups.set(group, items);
    }
    items.push(item);
    if (items.length >= this.maxBatch) {
      this.groups.delete(group);
      this.send(items);
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Sends every queued group now. */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.groups.size === 0) return;
    const groups = [...this.groups.values()];
    this.groups.clear();
    for (const items of groups) this.send(items);
  };
}

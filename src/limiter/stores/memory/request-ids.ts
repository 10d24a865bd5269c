/**
 * The request ids of one subject log, by the log's positions, with an exact index: a log's entry at
 * position p has the hash `meta[2p]` (0: no id) and the id whose UTF-16 code units are
 * `chars[end(p − 1) .. end(p))` with end(p) = `meta[2p + 1]` (the two words share a cache line).
 *
 * Everything lives in typed arrays, so an id costs no heap object once recorded (the caller's
 * string dies young instead of living a day in the old generation, where every major GC would
 * mark it), and a lookup touches one table slot and, on a hash match, the id's characters:
 * O(1) expected, exact (a match compares every character, never the hash alone).
 *
 * The index is an open-addressing table of (hash, position) pairs, built only once the log holds
 * more than {@link SCAN_MAX} entries (below that a scan of the hashes is as fast and needs no table).
 * Entries the log trims are left in the table as stale slots (their position is below the log's
 * start) and skipped by lookups; the next rebuild drops them, so a trim costs nothing here.
 * Positions are stored plus `offset`, which grows by the prefix a compaction removes, so moving
 * the whole log down changes no slot.
 */

/** Entries a lookup scans without a table. */
export const SCAN_MAX = 64;
/** Slots of the smallest table; a table is rebuilt at half full (stale slots and tombstones count). */
const MIN_TABLE = 64;
/** Stored positions stay below 2^31: a larger offset makes the next compaction rebuild the table. */
const MAX_OFFSET = 2 ** 30;
/** A slot whose entry was removed from the middle of the log (undo). */
const TOMBSTONE = -1;

/** FNV-1a over UTF-16 code units, then murmur3's finaliser (the table uses the low bits); never 0. */
export function hashId(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) hash = Math.imul(hash ^ id.charCodeAt(index), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash === 0 ? 1 : hash | 0;
}

/** {@link hashId}, remembered for the last id: a check looks an id up, then records it. */
let memoId: string | undefined;
let memoHash = 0;
export function hashOf(id: string): number {
  if (id !== memoId) {
    memoHash = hashId(id);
    memoId = id;
  }
  return memoHash;
}

/**
 * A one-bit-per-id filter of 64 bits (two words), kept on a subject's state so that most checks of
 * a new id read no log: a clear bit means the id is not logged; a set one may be a false positive.
 */
export interface IdFilter {
  idBitsLow: number;
  idBitsHigh: number;
}

export function mayHold(filter: IdFilter, id: string): boolean {
  const bit = hashOf(id) >>> 26;
  return ((bit < 32 ? filter.idBitsLow >>> bit : filter.idBitsHigh >>> (bit - 32)) & 1) === 1;
}

export function addToFilter(filter: IdFilter, id: string): void {
  const bit = hashOf(id) >>> 26;
  if (bit < 32) filter.idBitsLow |= 1 << bit;
  else filter.idBitsHigh |= 1 << (bit - 32);
}

export class RequestIds {
  /** Positions held: the log's array length (live entries and its trimmed prefix). */
  private length: number;
  /** Per position: its hash, then the end of its characters. */
  private meta: Int32Array;
  private chars = new Uint16Array(64);
  /** (hash, position + offset + 1) pairs; a second word of 0 is an empty slot. */
  private table: Int32Array | undefined;
  private mask = 0;
  /** Slots not empty: entries, stale ones and tombstones. */
  private used = 0;
  private offset = 0;

  /** Ids for a log of `length` entries recorded without one. */
  constructor(length: number) {
    this.length = length;
    this.meta = new Int32Array(2 * Math.max(16, length * 2));
  }

  /** The position of `id` among the live positions (≥ `start`), or -1. */
  indexOf(id: string, start: number): number {
    const hash = hashOf(id);
    const table = this.table;
    if (table === undefined) {
      const meta = this.meta;
      for (let position = this.length - 1; position >= start; position--) {
        if (meta[2 * position] === hash && this.holds(position, id)) return position;
      }
      return -1;
    }
    const mask = this.mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = table[2 * slot + 1]!;
      if (stored === 0) return -1;
      if (stored > 0 && table[2 * slot] === hash) {
        const position = stored - 1 - this.offset;
        if (position >= start && this.holds(position, id)) return position;
      }
    }
  }

  /** Records `id` (undefined: none) at a new last position. */
  append(id: string | undefined, start: number): void {
    this.insertAt(this.length, id, start);
  }

  /** Records `id` (undefined: none) at `position` ≤ length, moving the later positions up by one. */
  insertAt(position: number, id: string | undefined, start: number): void {
    if (2 * this.length === this.meta.length) this.growPositions();
    const meta = this.meta;
    const size = id === undefined ? 0 : id.length;
    const begin = this.end(position - 1);
    const charEnd = this.end(this.length - 1);
    if (charEnd + size > this.chars.length) this.growChars(charEnd + size);
    if (position < this.length) {
      // Later positions move up, the last first, so no two slots ever hold one position.
      if (this.table) for (let p = this.length - 1; p >= position; p--) this.move(p, 1);
      meta.copyWithin(2 * position + 2, 2 * position, 2 * this.length);
      for (let p = position + 1; p <= this.length; p++) meta[2 * p + 1] = meta[2 * p + 1]! + size;
      if (size > 0) this.chars.copyWithin(begin + size, begin, charEnd);
    }
    this.length++;
    const chars = this.chars;
    for (let index = 0; index < size; index++) chars[begin + index] = id!.charCodeAt(index);
    const hash = id === undefined ? 0 : hashOf(id);
    meta[2 * position] = hash;
    meta[2 * position + 1] = begin + size;
    if (this.table === undefined && this.length - start > SCAN_MAX) this.rebuild(start);
    else if (hash !== 0 && this.table) {
      if ((this.used + 1) * 2 > this.table.length / 2) this.rebuild(start);
      else this.put(hash, position);
    }
  }

  /** Removes `position`, moving the later positions down by one. */
  removeAt(position: number): void {
    const meta = this.meta;
    if (this.table && meta[2 * position] !== 0) this.table[this.slotOf(position) + 1] = TOMBSTONE;
    const begin = this.end(position - 1);
    const size = meta[2 * position + 1]! - begin;
    const charEnd = this.end(this.length - 1);
    if (this.table) for (let p = position + 1; p < this.length; p++) this.move(p, -1);
    meta.copyWithin(2 * position, 2 * position + 2, 2 * this.length);
    this.length--;
    for (let p = position; p < this.length; p++) meta[2 * p + 1] = meta[2 * p + 1]! - size;
    if (size > 0) this.chars.copyWithin(begin, begin + size, charEnd);
  }

  /** Drops positions below `cut` (the log's trimmed prefix), moving the rest down by `cut`. */
  compact(cut: number): void {
    const meta = this.meta;
    const base = this.end(cut - 1);
    this.chars.copyWithin(0, base, this.end(this.length - 1));
    meta.copyWithin(0, 2 * cut, 2 * this.length);
    this.length -= cut;
    for (let p = 0; p < this.length; p++) meta[2 * p + 1] = meta[2 * p + 1]! - base;
    this.offset += cut;
    if (this.table && this.offset > MAX_OFFSET) this.rebuild(0);
  }

  /** The id recorded at `position`; undefined: none. */
  at(position: number): string | undefined {
    if (this.meta[2 * position] === 0) return undefined;
    return String.fromCharCode(...this.chars.subarray(this.end(position - 1), this.meta[2 * position + 1]!));
  }

  /** Where the characters of `position` end (0 before the first). */
  private end(position: number): number {
    return position < 0 ? 0 : this.meta[2 * position + 1]!;
  }

  /** Whether the id at `position` is `id`, character by character. */
  private holds(position: number, id: string): boolean {
    const begin = this.end(position - 1);
    if (this.meta[2 * position + 1]! - begin !== id.length) return false;
    const chars = this.chars;
    for (let index = 0; index < id.length; index++) if (chars[begin + index] !== id.charCodeAt(index)) return false;
    return true;
  }

  /** Index in `table` of the slot holding `position` (which has an id). */
  private slotOf(position: number): number {
    const table = this.table!;
    const stored = position + this.offset + 1;
    const mask = this.mask;
    let slot = this.meta[2 * position]! & mask;
    while (table[2 * slot + 1] !== stored) slot = (slot + 1) & mask;
    return 2 * slot;
  }

  /** Moves the slot of `position`, if it has an id, to `position + delta`. */
  private move(position: number, delta: number): void {
    if (this.meta[2 * position] === 0) return;
    const index = this.slotOf(position) + 1;
    this.table![index] = this.table![index]! + delta;
  }

  private put(hash: number, position: number): void {
    const table = this.table!;
    const mask = this.mask;
    let slot = hash & mask;
    while (table[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
    table[2 * slot] = hash;
    table[2 * slot + 1] = position + this.offset + 1;
    this.used++;
  }

  /** A table of the live ids alone (stale slots and tombstones dropped), at most a third full. */
  private rebuild(start: number): void {
    const meta = this.meta;
    let live = 0;
    for (let p = start; p < this.length; p++) if (meta[2 * p] !== 0) live++;
    let slots = MIN_TABLE;
    while (slots < live * 3) slots *= 2;
    if (this.table?.length === 2 * slots) this.table.fill(0);
    else this.table = new Int32Array(2 * slots);
    this.mask = slots - 1;
    this.used = 0;
    this.offset = 0;
    for (let p = start; p < this.length; p++) if (meta[2 * p] !== 0) this.put(meta[2 * p]!, p);
  }

  private growPositions(): void {
    const meta = new Int32Array(this.meta.length * 2);
    meta.set(this.meta);
    this.meta = meta;
  }

  private growChars(needed: number): void {
    let capacity = this.chars.length * 2;
    while (capacity < needed) capacity *= 2;
    const chars = new Uint16Array(capacity);
    chars.set(this.chars);
    this.chars = chars;
  }
}

/**
 * The units of what a risk rule's state can cost for one subject: each an upper bound of the
 * subject's keys as Redis `MEMORY USAGE` counts them (key names up to 70 characters, on a
 * standalone server or a cluster node) and of its state in process, whichever is larger. Each
 * kind (./kinds/) states its rule's bound from its parameters with them (`stateBytes`), and the
 * in-process store counts its states with them; a rule set whose rules together may keep more for
 * one event's values than a cap is refused (`checkRiskStateBytes`, ./rules.ts). docs/risk.md has
 * the table, test/limiter/events/state-bytes tests measure the bounds on Redis and in process.
 *
 * State grows with use in every kind (a window by its admissions, last-n by its outcomes,
 * distinct by its values, seen by the segments its values fall in, an HLL from sparse to dense),
 * so these are what a subject reaches after many events, not what one event allocates.
 */
import { SEEN_SEGMENT_BYTES } from './hashing.js';

/** Bytes per unit of state; each bounds its measured figures (in the comments) with some room. */
export const STATE_BYTES = {
  /** A key: name, object, dict entry (88 B for a 36-character name; 104 B on a cluster node). */
  key: 160,
  /**
   * A log entry: the limiter's sorted set 103–120 B an entry (packed 6–11 B) and in process about
   * 125 B with the request id the engine makes; the event store's packed string 12 B, its
   * in-process entries about 95 B.
   */
  logEntry: 144,
  /** The limiter's counters hash (fixed-window, sliding-counter, token-bucket): a few fields. */
  counters: 512,
  /** A list's fixed part, and an outcome of up to 64 characters (Redis 68 B; in process a string and a slot, 88 B). */
  lastNBase: 256,
  lastNEntry: 112,
  /** A distinct value: sorted-set entry of a 48-bit member, 118–139 B (in process a Map entry, about 100 B). */
  distinctEntry: 144,
  /**
   * One generation of a HyperLogLog, its key included: Redis's dense encoding 14,424 B; in process
   * 16,384 one-byte registers and their objects (17.5–19 KB a generation measured). Both start
   * sparse, a few bytes a value.
   */
  hyperLogLog: 20_480,
  /**
   * A `seen` filter segment of 4,032 bytes, written: in Redis a 4,096-byte allocation and its key
   * (4,184 B), in process its array and objects (about 4,340 B).
   */
  seenSegment: 4480,
  /** A one-key `seen` filter: its bytes, a fourth more for the allocator's rounding, and this. */
  seenFilter: 512,
} as const;

/** Bytes of one `seen` filter of `filterBytes` when all of it is written (see hashing.ts, segments). */
export function seenFilterStateBytes(filterBytes: number): number {
  if (filterBytes <= SEEN_SEGMENT_BYTES) return Math.ceil(1.25 * (filterBytes + 6)) + STATE_BYTES.seenFilter;
  return Math.ceil(filterBytes / SEEN_SEGMENT_BYTES) * STATE_BYTES.seenSegment;
}

/**
 * What a risk rule's state can cost for one subject, from its parameters alone: an upper bound of
 * the subject's keys as Redis `MEMORY USAGE` counts them (key names up to 70 characters, on a
 * standalone server or a cluster node) and of its state in process, whichever is larger. A rule
 * set whose rules together may keep more for one event's values than a cap is refused
 * ({@link checkRiskStateBytes}); docs/risk.md has the table, test/limiter/events/state-bytes
 * tests measure the bounds on Redis and in process.
 *
 * State grows with use in every kind (a window by its admissions, last-n by its outcomes,
 * distinct by its values, seen by the segments its values fall in, an HLL from sparse to dense),
 * so these are what a subject reaches after many events, not what one event allocates.
 */
import { SEEN_SEGMENT_BYTES } from './hashing.js';
import { RiskRuleError, seenFilterSize } from './rules.js';
import { RISK_LIMITS, type RiskRule } from './types.js';

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

/** A count as written in messages: 1,440,160. */
const n = (count: number) => count.toLocaleString('en-US');

/** A rule's worst-case bytes for one subject, and how they add up (for messages and docs). */
export function riskRuleStateBytes(rule: RiskRule): { bytes: number; why: string } {
  const { key, logEntry, counters, lastNBase, lastNEntry, distinctEntry, hyperLogLog } = STATE_BYTES;
  switch (rule.kind) {
    case 'window':
      // With a request id (every recorded risk check has one) the limiter logs ids too, and a
      // counter algorithm admits at most 2 × limit within one window (a fixed window's edge).
      return rule.algorithm === 'sliding-log'
        ? { bytes: 2 * key + rule.limit * logEntry, why: `a log of ${n(rule.limit)} entries × ${logEntry} B and a ban` }
        : {
            bytes: 3 * key + counters + 2 * rule.limit * logEntry,
            why: `counters, a log of request ids of up to ${n(2 * rule.limit)} entries × ${logEntry} B and a ban`,
          };
    case 'last-n':
      return { bytes: key + lastNBase + rule.n * lastNEntry, why: `${n(rule.n)} outcomes × ${lastNEntry} B` };
    case 'distinct':
      return rule.limit > RISK_LIMITS.distinctExact
        ? { bytes: 2 * hyperLogLog, why: `2 HyperLogLogs × ${n(hyperLogLog)} B` }
        : { bytes: key + rule.limit * distinctEntry, why: `${n(rule.limit)} values × ${distinctEntry} B` };
    case 'seen': {
      const filterBytes = seenFilterSize(rule).bits / 8;
      const filters = rule.windowMs === undefined ? 1 : 2;
      return {
        bytes: key + filters * seenFilterStateBytes(filterBytes),
        why: `${filters} Bloom filter${filters > 1 ? 's' : ''} of ${n(filterBytes)} B for ${n(rule.capacity)} values at a false-positive rate of ${rule.falsePositiveRate}`,
      };
    }
  }
}

/**
 * Throws a {@link RiskRuleError} when the rules together may keep more than `maxBytes` for one
 * event's values (the sum of each rule's bytes for one subject): naming the rule (`rules[2]`)
 * when it alone exceeds the cap, else the set (`rules`), with the computed bytes, how they add
 * up, and the cap (`capName` names it, e.g. a setting).
 */
export function checkRiskStateBytes(rules: readonly RiskRule[], maxBytes: number, capName = 'the cap'): void {
  const costs = rules.map(riskRuleStateBytes);
  const total = costs.reduce((sum, cost) => sum + cost.bytes, 0);
  if (total <= maxBytes) return;
  const cap = `above ${capName} of ${n(maxBytes)} bytes per event`;
  const largest = costs.reduce((best, cost, i) => (cost.bytes > costs[best]!.bytes ? i : best), 0);
  const cost = costs[largest]!;
  if (cost.bytes > maxBytes) {
    throw new RiskRuleError(`rules[${largest}]`, `keeps up to ${n(cost.bytes)} bytes per subject (${cost.why}), ${cap}`);
  }
  const parts = costs.map((c, i) => `"${rules[i]!.name}" ${n(c.bytes)}`).join(', ');
  throw new RiskRuleError('rules', `keep up to ${n(total)} bytes for one event's values (${parts}), ${cap}`);
}

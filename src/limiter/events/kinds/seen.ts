/**
 * `seen`: fires when the value of `of` was not recorded for the subject before (with `windowMs`:
 * within the window; a value recorded between one and two windows ago may still count as seen,
 * since the filter turns over by whole windows). A Bloom filter of `bits` bits and `hashes` hash
 * functions sized for `capacity` values at `falsePositiveRate`: never a false "not seen" (no
 * false negatives); a false "seen" with probability ≤ `falsePositiveRate` while at most
 * `capacity` values were recorded in one filter.
 *
 * The filter is blocked (../hashing.ts): a check reads the value's 64-byte block, a new value
 * writes it. In Redis a string per generation (`:b:<bits>:<generation>`, one key per segment
 * beyond one segment: `:<segment>`), the op `'s'` of `../scripts/includes/seen.lua`.
 */
import { type BaseRule, RISK_LIMITS } from '../base.js';
import { STATE_BYTES, seenFilterStateBytes } from '../cost.js';
import { bloomSize, SEEN_SEGMENT_BYTES, seenSegment } from '../hashing.js';
import { int, plainResult, type RiskKind, RiskRuleError, text } from './kind.js';

export interface SeenRiskRule extends BaseRule {
  kind: 'seen';
  of: string;
  /** Absent: ever (the filter is kept while used; see the stores' retention). */
  windowMs?: number;
  /** Values one filter is sized for (default 1000). */
  capacity: number;
  /** Bound of false "seen" answers at `capacity` values (default 0.001). */
  falsePositiveRate: number;
}

export interface SeenOp {
  kind: 'seen';
  subject: string;
  windowMs?: number;
  bits: number;
  hashes: number;
  value: string;
  record: boolean;
}

/** The Bloom filter a `seen` rule uses. */
export const seenFilterSize = (rule: { capacity: number; falsePositiveRate: number }) => bloomSize(rule.capacity, rule.falsePositiveRate);

interface Filter {
  generation: number;
  /** Its size in bits: a rule resized starts a new filter (as the Redis key names the size). */
  size: number;
  /** Its segments by number (0 for a one-segment filter), each made when a value first falls in it. */
  segments: Map<number, Uint8Array>;
  /** Bytes of its segments. */
  bytes: number;
}

interface SeenState {
  filters: Filter[];
  bytes: number;
}

const seenBytes = (state: SeenState) =>
  state.filters.reduce(
    (sum: number, filter) =>
      sum +
      (filter.size / 8 > SEEN_SEGMENT_BYTES
        ? filter.segments.size * STATE_BYTES.seenSegment
        : filter.segments.size * seenFilterStateBytes(filter.bytes)),
    STATE_BYTES.key,
  );

/** Bit positions inside a block as one argument: 2 bytes each, big-endian (read by struct.unpack). */
function packPositions(positions: readonly number[]): Buffer {
  const packed = Buffer.allocUnsafe(2 * positions.length);
  for (let i = 0; i < positions.length; i++) packed.writeUInt16BE(positions[i]!, 2 * i);
  return packed;
}

const n = (count: number) => count.toLocaleString('en-US');

export const seenKind: RiskKind<SeenRiskRule, SeenOp, 'NOT_SEEN'> = {
  name: 'seen',
  parameters: ['of', 'windowMs', 'capacity', 'falsePositiveRate'],
  codes: ['NOT_SEEN'],
  recordsEvents: true,

  normalize(rule, path, base) {
    const falsePositiveRate = rule.falsePositiveRate ?? 0.001;
    if (typeof falsePositiveRate !== 'number' || !(falsePositiveRate >= 1e-9 && falsePositiveRate <= 0.5)) {
      throw new RiskRuleError(`${path}.falsePositiveRate`, 'must be a number in [1e-9, 0.5]');
    }
    return {
      ...base,
      kind: 'seen',
      of: text(rule, 'of', path, RISK_LIMITS.nameLength),
      ...(rule.windowMs === undefined ? {} : { windowMs: int(rule, 'windowMs', path, 1, RISK_LIMITS.windowMs) }),
      capacity: int(rule, 'capacity', path, 1, RISK_LIMITS.seenCapacity, 1000),
      falsePositiveRate,
    };
  },

  reads: (rule) => [rule.of],

  stateBytes(rule) {
    const filterBytes = seenFilterSize(rule).bits / 8;
    const filters = rule.windowMs === undefined ? 1 : 2;
    return {
      bytes: STATE_BYTES.key + filters * seenFilterStateBytes(filterBytes),
      why: `${filters} Bloom filter${filters > 1 ? 's' : ''} of ${n(filterBytes)} B for ${n(rule.capacity)} values at a false-positive rate of ${rule.falsePositiveRate}`,
    };
  },

  op(rule, { subject, dimensions, record }) {
    const { bits, hashes } = seenFilterSize(rule);
    const value = dimensions[rule.of]!;
    return { kind: 'seen', subject, ...(rule.windowMs === undefined ? {} : { windowMs: rule.windowMs }), bits, hashes, value, record };
  },

  reason: () => ({ code: 'NOT_SEEN' }),

  store: {
    memory(op, t, { state: stateOf, hasher }) {
      const state = stateOf(op.subject, 'seen', (): SeenState => ({ filters: [], bytes: 0 }), seenBytes);
      const generation = op.windowMs === undefined ? 0 : Math.floor(t / op.windowMs);
      state.filters = state.filters.filter((f) => f.size === op.bits && (f.generation === generation || f.generation === generation - 1));
      const { block, positions } = hasher.positions(op.value, op.bits, op.hashes);
      const { segment = 0, offset, bytes } = seenSegment(block, op.bits / 8);
      const has = (filter: Filter | undefined) => {
        const bits = filter?.segments.get(segment);
        return bits !== undefined && positions.every((p) => (bits[offset + (p >> 3)]! & (1 << (p & 7))) !== 0);
      };
      let current = state.filters.find((f) => f.generation === generation);
      const inCurrent = has(current);
      const seen = inCurrent || has(state.filters.find((f) => f.generation === generation - 1));
      if (op.record && !inCurrent) {
        if (!current) {
          current = { generation, size: op.bits, segments: new Map(), bytes: 0 };
          state.filters.push(current);
        }
        let bits = current.segments.get(segment);
        if (!bits) {
          bits = new Uint8Array(bytes);
          current.segments.set(segment, bits);
          current.bytes += bytes;
        }
        for (const p of positions) bits[offset + (p >> 3)]! |= 1 << (p & 7);
      }
      return { fired: !seen, count: seen ? 1 : 0 };
    },

    encode(op, { base, hasher, now, seenRetentionMs }) {
      if (op.windowMs !== undefined && now === undefined) {
        // The generation needs the time before the script runs; without `now` the client's clock
        // picks it (a skew of s ms moves the turnover by s, the window's bound stays 1 to 2 windows).
        now = Date.now();
      }
      const generation = op.windowMs === undefined ? 0 : Math.floor(now! / op.windowMs);
      // `b`: a blocked filter (../hashing.ts), in segments when larger than one (`:<segment>` keys).
      // Filters of the standard layout (`s:` keys, before 2026-12) are not read: their values
      // count as new once, and they expire by their TTL.
      const { block, positions } = hasher.positions(op.value, op.bits, op.hashes);
      const { segment, offset, bytes } = seenSegment(block, op.bits / 8);
      const part = segment === undefined ? '' : `:${segment}`;
      const current = `${base}b:${op.bits}:${generation}${part}`;
      const previous = op.windowMs === undefined ? current : `${base}b:${op.bits}:${generation - 1}${part}`;
      const ttl = op.windowMs === undefined ? seenRetentionMs : 2 * op.windowMs;
      return { keys: [current, previous], args: ['s', bytes, op.record ? 1 : 0, ttl, offset, packPositions(positions)], now };
    },

    result: plainResult,
  },
};

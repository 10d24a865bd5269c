/**
 * Digests of dimension values, so no value appears in clear in a store's state or keys: HMAC-SHA256
 * keyed by the store's secret (plain SHA-256 without one: values then cannot be read, but can be
 * confirmed by guessing). Both stores hash the same way, so they agree on collisions too.
 */
import { createHmac, hash } from 'node:crypto';

export class ValueHasher {
  private readonly secret: string | Buffer | undefined;

  constructor(secret?: string | Buffer) {
    this.secret = secret === undefined || secret.length === 0 ? undefined : secret;
  }

  digest(domain: string, value: string): Buffer {
    const input = `${domain}\0${value}`;
    return this.secret === undefined ? hash('sha256', input, 'buffer') : createHmac('sha256', this.secret).update(input).digest();
  }

  /** A short tag of a subject for key names (16 base64url characters, 96 bits). */
  tag(subject: string): string {
    return this.digest('t', subject).toString('base64url').slice(0, 16);
  }

  /** The distinct-set member of a value: 48 bits in decimal (a listpack keeps it as an integer). */
  member(value: string): string {
    return String(this.digest('v', value).readUIntBE(0, 6));
  }

  /** A 64-bit hash of a value for a HyperLogLog, as its low and high 32 bits (unsigned). */
  hll(value: string): [number, number] {
    const digest = this.digest('h', value);
    return [digest.readUInt32BE(0), digest.readUInt32BE(4)];
  }

  /**
   * Where a value lives in a blocked Bloom filter of `bits` bits (a multiple of {@link BLOOM_BLOCK_BITS}):
   * its block (48 bits of the digest, modulo the blocks), and `hashes` bit positions inside that
   * block, 9 independent digest bits each (13 per digest; further digests for more). Double hashing,
   * fine over a whole filter, is not inside 512 bits: its progressions overlap and the measured
   * false-positive rate was 2.3× the model's.
   */
  positions(value: string, bits: number, hashes: number): { block: number; positions: number[] } {
    let digest = this.digest('b', value);
    const blocks = Math.max(1, Math.floor(bits / BLOOM_BLOCK_BITS));
    const block = (digest.readUInt32BE(0) * 0x10000 + digest.readUInt16BE(4)) % blocks;
    const positions: number[] = [];
    for (let i = 0, at = 6; i < hashes; i++, at += 2) {
      if (at > 30) {
        digest = this.digest(`b${i}`, value);
        at = 0;
      }
      positions.push(digest.readUInt16BE(at) & (BLOOM_BLOCK_BITS - 1));
    }
    return { block, positions };
  }
}

/**
 * Bits of one block of a `seen` filter: a value's k bits all fall in one 64-byte block (a cache
 * line), so a check reads one short range and a new value writes it back, whatever k is
 * (docs/risk.md, "seen": its cost against the standard layout).
 */
export const BLOOM_BLOCK_BITS = 512;

/**
 * A `seen` filter larger than this is kept in segments of this many bytes, each its own key (in
 * process its own array), created when a value first falls in it: a subject's first value
 * allocates one segment, not the whole filter, so memory grows with the values recorded. 63
 * blocks: with Redis's string header a segment is one 4,096-byte allocation (64 would take
 * 5,120). A filter up to this size is one key, as before segments.
 */
export const SEEN_SEGMENT_BYTES = 63 * (BLOOM_BLOCK_BITS / 8);

/** Where a filter's block lies: its segment (`undefined` for a one-key filter), the byte offset in it, and its size. */
export function seenSegment(block: number, filterBytes: number): { segment: number | undefined; offset: number; bytes: number } {
  const at = block * (BLOOM_BLOCK_BITS / 8);
  if (filterBytes <= SEEN_SEGMENT_BYTES) return { segment: undefined, offset: at, bytes: filterBytes };
  const segment = Math.floor(at / SEEN_SEGMENT_BYTES);
  const start = segment * SEEN_SEGMENT_BYTES;
  return { segment, offset: at - start, bytes: Math.min(SEEN_SEGMENT_BYTES, filterBytes - start) };
}

/** False-positive rate of a blocked filter: Σ_j Poisson(j; λ = n·B/m) · (1 − (1 − 1/B)^(k·j))^k. */
export function blockedFalsePositiveRate(capacity: number, bits: number, hashes: number): number {
  const B = BLOOM_BLOCK_BITS;
  const lambda = (capacity * B) / bits;
  const top = Math.ceil(lambda + 12 * Math.sqrt(lambda) + 30);
  let rate = 0;
  let logPoisson = -lambda; // j = 0
  for (let j = 0; j <= top; j++) {
    if (j > 0) logPoisson += Math.log(lambda) - Math.log(j);
    rate += Math.exp(logPoisson) * (1 - (1 - 1 / B) ** (hashes * j)) ** hashes;
  }
  return rate;
}

const sizes = new Map<string, { bits: number; hashes: number }>();

/**
 * Blocked Bloom filter size for `capacity` values at false-positive rate `p`: start from the
 * standard filter's m = ⌈−n·ln p / ln²2⌉ bits and k = round(m/n · ln 2) hashes, then add blocks
 * until {@link blockedFalsePositiveRate} is at most p (blocks load unevenly, so a blocked filter
 * needs a little more: 15.9 bits per value at p = 0.001 and n = 1000, against 14.4). Memoized.
 */
export function bloomSize(capacity: number, falsePositiveRate: number): { bits: number; hashes: number } {
  const id = `${capacity}:${falsePositiveRate}`;
  const known = sizes.get(id);
  if (known) return known;
  const B = BLOOM_BLOCK_BITS;
  const standard = (-capacity * Math.log(falsePositiveRate)) / Math.LN2 ** 2;
  const hashes = Math.min(B / 2, Math.max(1, Math.round((standard / capacity) * Math.LN2)));
  let blocks = Math.max(1, Math.ceil(standard / B));
  // Grows by about 1/64 of the filter a step, so sizing takes tens of steps, once per rule.
  while (blockedFalsePositiveRate(capacity, blocks * B, hashes) > falsePositiveRate) blocks += Math.max(1, Math.ceil(blocks / 64));
  const size = { bits: blocks * B, hashes };
  sizes.set(id, size);
  return size;
}

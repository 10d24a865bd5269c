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

  /**
   * The `hashes` bit positions of a value in a filter of `bits` bits: double hashing
   * h1 + i·h2 mod bits (Kirsch–Mitzenmacher: the same false-positive rate as independent hashes).
   */
  positions(value: string, bits: number, hashes: number): number[] {
    const digest = this.digest('b', value);
    const h1 = digest.readUInt32BE(0) * 0x10000 + digest.readUInt16BE(4);
    const h2 = (digest.readUInt32BE(6) * 0x10000 + digest.readUInt16BE(10)) | 1;
    const positions: number[] = [];
    for (let i = 0; i < hashes; i++) positions.push((h1 + i * (h2 % bits)) % bits);
    return positions;
  }
}

/**
 * Bloom filter size for `capacity` values at false-positive rate `p`: bits m = ⌈−n·ln p / ln²2⌉,
 * hashes k = round(m/n · ln 2) (at least 1). Bits per value: −ln p / ln²2 (14.4 at p = 0.001).
 */
export function bloomSize(capacity: number, falsePositiveRate: number): { bits: number; hashes: number } {
  const bits = Math.max(8, Math.ceil((-capacity * Math.log(falsePositiveRate)) / Math.LN2 ** 2));
  const hashes = Math.max(1, Math.round((bits / capacity) * Math.LN2));
  return { bits, hashes };
}

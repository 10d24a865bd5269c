/**
 * Identifiers. Message ids are ULID-like: 26 characters of Crockford base32, the first 10 the
 * creation time in ms (48 bits), the last 16 random (80 bits). They sort by creation time as
 * plain strings (byte-wise), so the primary key index is also a time index, and ids made within
 * one millisecond by this process are strictly increasing (the random part is incremented).
 */
import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RANDOM_BITS = 80n;
const RANDOM_MAX = (1n << RANDOM_BITS) - 1n;
const TIME_MAX = 2 ** 48 - 1;

/** Number of shards a message id hashes into (`shardOf`). Partitions are `shard % P`. */
export const SHARD_COUNT = 1024;

let lastTime = -1;
let lastRandom = 0n;

function encode(value: bigint, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[Number(rest & 31n)] + out;
    rest >>= 5n;
  }
  return out;
}

function randomPart(): bigint {
  return BigInt(`0x${randomBytes(10).toString('hex')}`);
}

/**
 * A new time-sortable id (26 chars). Monotonic within this process: if the clock stands still or
 * steps back, the previous time is reused and the random part incremented.
 *
 * @param now epoch ms to stamp (default `Date.now()`); only the embedded time, not uniqueness, depends on it.
 */
export function newMessageId(now: number = Date.now()): string {
  if (!Number.isSafeInteger(now) || now < 0 || now > TIME_MAX) throw new RangeError(`id time out of range: ${now}`);
  let time = now;
  let random: bigint;
  if (time <= lastTime) {
    time = lastTime;
    random = lastRandom + 1n;
    if (random > RANDOM_MAX) {
      // 2^80 ids in one ms cannot happen; stepping the time keeps ids ordered if it ever did.
      time += 1;
      random = randomPart();
    }
  } else {
    random = randomPart();
  }
  lastTime = time;
  lastRandom = random;
  return encode(BigInt(time), 10) + encode(random, 16);
}

/** A new id for any row (tenants, keys, providers, attempts): the same format as message ids. */
export const newId = newMessageId;

/** The epoch ms embedded in an id made by {@link newMessageId}. */
export function timeOfId(id: string): number {
  let time = 0;
  for (const char of id.slice(0, 10)) {
    const digit = CROCKFORD.indexOf(char);
    if (digit < 0) throw new RangeError(`not a sluice id: ${id}`);
    time = time * 32 + digit;
  }
  return time;
}

/**
 * The shard (0..1023) of a message id: FNV-1a of the id. Stable forever (it is stored), so never
 * change this function; a dispatcher partition p of P owns the messages with `shard % P == p`.
 */
export function shardOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % SHARD_COUNT;
}

/** SHA-256 hex of a string (API keys, request bodies). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

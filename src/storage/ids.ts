/**
 * Identifiers. Message ids are ULID-like: 26 characters of Crockford base32, the first 10 the
 * creation time in ms (48 bits), the last 16 random (80 bits). They sort by creation time as
 * plain strings (byte-wise), so the primary key index is also a time index, and ids made within
 * one millisecond by this process are strictly increasing (the random part is incremented).
 */
import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** The 80 random bits are kept as two 40-bit halves: plain numbers, no BigInt on the hot path. */
const HALF = 2 ** 40;
const TIME_MAX = 2 ** 48 - 1;

/** Number of shards a message id hashes into (`shardOf`). Partitions are `shard % P`. */
export const SHARD_COUNT = 1024;

let lastTime = -1;
let randomHigh = 0;
let randomLow = 0;

/** `length` base32 digits of `value` (an integer below 32^length). */
function encode(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/** Random bytes drawn 4 KiB at a time: a `randomBytes` call costs the same whatever its size. */
let pool = Buffer.alloc(0);
let poolOffset = 0;

function newRandom(): void {
  if (poolOffset + 10 > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  randomHigh = pool.readUIntBE(poolOffset, 5);
  randomLow = pool.readUIntBE(poolOffset + 5, 5);
  poolOffset += 10;
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
  if (time <= lastTime) {
    time = lastTime;
    randomLow++;
    if (randomLow === HALF) {
      randomLow = 0;
      randomHigh++;
      if (randomHigh === HALF) {
        // 2^80 ids in one ms cannot happen; stepping the time keeps ids ordered if it ever did.
        time += 1;
        newRandom();
      }
    }
  } else {
    newRandom();
  }
  lastTime = time;
  return encode(time, 10) + encode(randomHigh, 8) + encode(randomLow, 8);
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

/**
 * Every Redis key and log member the RedisStore writes is built here.
 *
 * A subject's keys are `${prefix}:{${tag}}:plg|log|ban|ctr|sch`, where `tag` is a short hash of the
 * subject (HMAC-SHA256 keyed by `keySecret` when given, else SHA-256; the first 12 bytes in
 * base64url = 16 characters, 96 bits: two subjects share a tag with probability ~n²/2^97).
 * The subject (which holds a recipient) therefore never appears in clear, and the `{tag}` hash
 * tag puts all of one subject's keys in one Redis Cluster slot, so one script touches one slot.
 * With `slotGroups`, keys are `${prefix}:{${group}}:${tag}:log|...`: subjects share a group's slot,
 * so a cluster batch (one per slot) carries several subjects' decisions.
 */
import { createHmac, hash } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';

/** The keys of one subject, and the cluster slot they all live in. */
export interface SubjectKeys {
  /**
   * String: the packed log, the log of a subject while it holds at most `packedLogMax` entries
   * (format in scripts/check-batch.lua). A name of its own, so a release that knows only the
   * sorted set reads it as absent (never WRONGTYPE).
   */
  readonly packed: string;
  /**
   * Sorted set, the log beyond `packedLogMax` entries (and the log of releases before the packed one): score = admission time (ms); member = an integer, so a listpack stores it as one:
   * a request id's 32-bit hash ({@link RedisKeys.requestMember}), or for an anonymous attempt a
   * number chosen by the script to be unique in the set (13 bits while the log is small).
   */
  readonly log: string;
  /** String: the ban's end time (ms); its PX TTL is the remaining time (cleanup only). */
  readonly ban: string;
  /** Hash: fixed-window, sliding-counter and token-bucket fields (see scripts/check-batch.lua). */
  readonly counters: string;
  /** String: the latest count time admitted later than its decision time (scheduled sends; see scripts/check-batch.lua). */
  readonly scheduled: string;
  /** Redis Cluster slot of the five keys. */
  readonly slot: number;
}

export interface RedisKeysOptions {
  /** Key prefix, without a trailing colon. */
  prefix: string;
  /** Secret for HMAC-SHA256 of subjects and request ids; without it plain SHA-256 is used. */
  keySecret?: string | Buffer;
  /** Subjects whose keys are kept computed (hot subjects are checked again and again). */
  cacheSize?: number;
  /**
   * Put subjects into this many hash-tag groups (1 to 16384) instead of one slot each: keys become
   * `${prefix}:{g<k>}:${tag}:log|...`, the group's tag chosen so that group k's slot is in the k-th
   * of `slotGroups` equal slot ranges (a cluster whose masters hold equal ranges gets equal shares
   * when `slotGroups` is a multiple of the masters). On a cluster the store batches per slot, so
   * groups let one script call carry many subjects' decisions. Off by default: a store with another
   * setting reads other keys (switching starts every subject afresh).
   */
  slotGroups?: number;
}

const SLOTS = 16_384;

/** For group k of n, a hash tag whose slot lies in [k·16384/n, (k+1)·16384/n). */
function groupTag(k: number, n: number): string {
  const low = Math.ceil((k * SLOTS) / n);
  const high = Math.ceil(((k + 1) * SLOTS) / n);
  for (let i = 0; ; i++) {
    const tag = `g${k}.${i}`;
    const slot = calculateSlot(tag);
    if (slot >= low && slot < high) return tag;
  }
}

/** Builds keys and log members; caches the keys of recently seen subjects. */
export class RedisKeys {
  readonly prefix: string;
  private readonly secret: string | Buffer | undefined;
  private readonly cache = new Map<string, SubjectKeys>();
  private readonly cacheSize: number;
  private readonly groupTags: readonly string[] | undefined;

  constructor(options: RedisKeysOptions) {
    if (typeof options.prefix !== 'string' || options.prefix.length === 0) throw new TypeError('prefix must be a non-empty string');
    if (/[{}]/.test(options.prefix)) throw new TypeError('prefix must not contain { or } (it would change the hash tag)');
    this.prefix = options.prefix;
    this.secret = options.keySecret === undefined || options.keySecret.length === 0 ? undefined : options.keySecret;
    this.cacheSize = options.cacheSize ?? 50_000;
    const groups = options.slotGroups;
    if (groups !== undefined && !(Number.isInteger(groups) && groups >= 1 && groups <= SLOTS)) {
      throw new RangeError('slotGroups must be an integer in [1, 16384]');
    }
    this.groupTags = groups === undefined ? undefined : Array.from({ length: groups }, (_, k) => groupTag(k, groups));
  }

  /** The keys of `subject`. */
  subject(subject: string): SubjectKeys {
    const cached = this.cache.get(subject);
    if (cached) return cached;
    // 16 base64url characters = the digest's first 12 bytes.
    const tag = this.digest('s', subject, 'base64url').slice(0, 16);
    const groups = this.groupTags;
    // A group is the tag's first 32 bits, modulo the groups (the tag is a uniform hash).
    const hashTag = groups ? groups[Buffer.from(tag, 'base64url').readUInt32BE(0) % groups.length]! : tag;
    const base = groups ? `${this.prefix}:{${hashTag}}:${tag}:` : `${this.prefix}:{${tag}}:`;
    const keys: SubjectKeys = {
      packed: `${base}plg`,
      log: `${base}log`,
      ban: `${base}ban`,
      counters: `${base}ctr`,
      scheduled: `${base}sch`,
      slot: calculateSlot(hashTag),
    };
    // Dropping the whole cache when full is O(1) amortised and keeps hot subjects a miss away.
    if (this.cache.size >= this.cacheSize) this.cache.clear();
    this.cache.set(subject, keys);
    return keys;
  }

  /**
   * The log member standing for `requestId`: a signed 32-bit integer from its hash, written in
   * decimal so a listpack stores it in 5 bytes instead of a 36-byte UUID. Two ids share a member
   * with probability 2^-32, so a check with a request id is falsely taken for a repeat with
   * probability ≈ (entries in the log) / 2^32. With `keySecret` the members cannot be predicted,
   * so such collisions cannot be aimed at.
   */
  requestMember(requestId: string): string {
    return String(Number.parseInt(this.digest('r', requestId, 'hex').slice(0, 8), 16) | 0);
  }

  /** The pattern matching every key of this prefix (for SCAN in tests and tools). */
  pattern(): string {
    return `${this.prefix}:{*}:*`;
  }

  private digest(domain: string, value: string, encoding: 'base64url' | 'hex'): string {
    // The domain prefix keeps subject tags and request members from ever hashing the same input.
    // crypto.hash (one shot) costs about half of createHash; it matters on every uncached subject.
    const input = `${domain}\0${value}`;
    return this.secret === undefined ? hash('sha256', input, encoding) : createHmac('sha256', this.secret).update(input).digest(encoding);
  }
}

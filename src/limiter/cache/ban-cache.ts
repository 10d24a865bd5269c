/**
 * BanCache: bans learnt from the store, answered in process until they end, so a banned subject
 * (what an attack on one recipient looks like) costs no store call for the rest of its ban.
 *
 * A check answered `BANNED` by the store tells the ban's end (`at + retryAfterMs`); the cache keeps
 * it and answers later checks of that subject `BANNED` without a store call. Bounds:
 * - **Never past the ban's end**: the end is converted to the local clock from the time the check
 *   was *sent* (the store decided at or after it), so a cached answer ends no later than the ban.
 * - **Never longer than `maxTtlMs`** after it was learnt: a ban lifted elsewhere (`unban`, `reset`,
 *   a rule change) while the invalidation cannot reach this process stays answered at most that long.
 *   Invalidations ({@link BanCache.invalidate}, {@link BanCache.invalidateOwner}, {@link BanCache.clear})
 *   drop entries at once; the Limiter calls them for its own `unban`, `reset` and `ban`.
 * - A check with a request id is answered only with `answerRequestIds` (semantics step 1: the retry
 *   of an admitted send reads `OK` even while banned, which only the store can tell): set it when
 *   request ids are new at every check (sluice's are message ids made per request).
 * - `peek` is never answered here (it reports counts while banned).
 * - Longer bans imposed elsewhere meanwhile are learnt when the cached one ends (the store answers again).
 */
import { type Clock, systemClock } from '../clock.js';
import type { CheckRequest, Decision } from '../types.js';

export interface BanCacheOptions {
  /** Longest an entry is answered after it was learnt, ms (default 10,000). */
  maxTtlMs?: number;
  /** Most subjects cached (default 100,000); when full, the oldest entries go first. */
  maxEntries?: number;
  /** Answer checks that carry a request id too (default false; see above), or those of the subjects it accepts. */
  answerRequestIds?: boolean | ((subject: string) => boolean);
  /** Names a subject's owner, for {@link BanCache.invalidateOwner} (sluice: the tenant). */
  ownerOf?: (subject: string) => string | undefined;
  /** The local clock the cached ends are kept on (default the system clock). */
  clock?: Clock;
  /** Told of every lookup of a check: `hit` answered here, `miss` went to the store. */
  onLookup?: (result: 'hit' | 'miss') => void;
}

interface Entry {
  /** Ban end on the decision clock (the store's): compared with explicit `now` values. */
  readonly end: number;
  /** Ban end on the local clock, measured from when the check was sent. */
  readonly localEnd: number;
  /** When the entry stops being answered on the local clock: min(localEnd, learnt + maxTtlMs). */
  readonly expires: number;
}

export class BanCache {
  readonly maxTtlMs: number;
  readonly maxEntries: number;
  private readonly answerRequestIds: boolean | ((subject: string) => boolean);
  private readonly ownerOf: ((subject: string) => string | undefined) | undefined;
  private readonly clock: Clock;
  private readonly onLookup: ((result: 'hit' | 'miss') => void) | undefined;
  private readonly entries = new Map<string, Entry>();
  /** Lookups answered here and lookups passed to the store, since construction. */
  hits = 0;
  misses = 0;

  constructor(options: BanCacheOptions = {}) {
    this.maxTtlMs = options.maxTtlMs ?? 10_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(this.maxTtlMs) || this.maxTtlMs < 0) throw new RangeError('banCache.maxTtlMs must be a non-negative integer');
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 0)
      throw new RangeError('banCache.maxEntries must be a non-negative integer');
    this.answerRequestIds = options.answerRequestIds ?? false;
    this.ownerOf = options.ownerOf;
    this.clock = options.clock ?? systemClock;
    this.onLookup = options.onLookup;
  }

  /** Subjects cached now (some may have ended and not yet been dropped). */
  get size(): number {
    return this.entries.size;
  }

  /** The local time to pass to {@link BanCache.learn} for a check sent now. */
  now(): number {
    return this.clock.now();
  }

  /**
   * The cached answer to a check, or undefined when the store must decide. The request's `now` is
   * its explicit decision time, if any.
   */
  lookup(request: Pick<CheckRequest, 'subject' | 'requestId' | 'now'>): Decision | undefined {
    const { subject, now } = request;
    if (this.maxEntries === 0 || (request.requestId !== undefined && !this.answersIds(subject))) return undefined;
    const entry = this.entries.get(subject);
    if (entry !== undefined) {
      const local = this.clock.now();
      if (local < entry.expires) {
        // With an explicit `now` the ban end on that clock decides; else the local one does.
        const at = now ?? entry.end - (entry.localEnd - local);
        if (at < entry.end) {
          this.hits++;
          this.onLookup?.('hit');
          return { allowed: false, code: 'BANNED', retryAfterMs: entry.end - at, counts: [], at };
        }
      } else {
        this.entries.delete(subject);
      }
    }
    this.misses++;
    this.onLookup?.('miss');
    return undefined;
  }

  /** Learns from a store's decision of a check sent at local time `sentAt`. */
  learn(subject: string, decision: Decision, sentAt: number): void {
    if (decision.code !== 'BANNED' || decision.retryAfterMs <= 0 || this.maxEntries === 0) return;
    const localEnd = sentAt + decision.retryAfterMs;
    const expires = Math.min(localEnd, sentAt + this.maxTtlMs);
    if (expires <= this.clock.now()) return;
    if (!this.entries.has(subject) && this.entries.size >= this.maxEntries) this.evict();
    this.entries.set(subject, { end: decision.at + decision.retryAfterMs, localEnd, expires });
  }

  /** Drops the subject's cached ban (an unban, reset or new ban of it). */
  invalidate(subject: string): void {
    this.entries.delete(subject);
  }

  /** Drops every cached ban of an owner's subjects (a rule change of a tenant). Needs `ownerOf`; without it, drops all. */
  invalidateOwner(owner: string): void {
    if (!this.ownerOf) {
      this.clear();
      return;
    }
    for (const subject of this.entries.keys()) if (this.ownerOf(subject) === owner) this.entries.delete(subject);
  }

  /** Drops everything (invalidations may have been missed). */
  clear(): void {
    this.entries.clear();
  }

  private answersIds(subject: string): boolean {
    const answer = this.answerRequestIds;
    return typeof answer === 'function' ? answer(subject) : answer;
  }

  private evict(): void {
    // Ended entries first, else the oldest learnt (Map order): one pass over at most 16 entries.
    const local = this.clock.now();
    let oldest: string | undefined;
    let seen = 0;
    for (const [subject, entry] of this.entries) {
      oldest ??= subject;
      if (entry.expires <= local) {
        this.entries.delete(subject);
        return;
      }
      if (++seen >= 16) break;
    }
    if (oldest !== undefined) this.entries.delete(oldest);
  }
}

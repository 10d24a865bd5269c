/**
 * Live configuration (DESIGN.md §5): reads go local cache (seconds) → Redis cache → SQL. A change
 * is published on a bus and every instance drops its copy, so an admin change is enforced
 * everywhere within a second without a restart. Without Redis the bus is in process.
 */
import type { Redis } from 'ioredis';
import { withDeadline } from '../core/deadline.js';
import type { Clock } from '../limiter/index.js';
import type { ChangeBus } from './change-bus.js';

export interface CacheStats {
  /** One look at a level: `local` and `redis` hit or miss; `sql` (the source) always answers, a `hit`. */
  lookup(level: 'local' | 'redis' | 'sql', result: 'hit' | 'miss'): void;
}

export interface LiveCacheOptions<T> {
  /** Namespace of the keys: `tenant`, `apikey`... */
  name: string;
  /** The source of truth (SQL); `undefined` = does not exist (cached too, so unknown keys cost no SQL). */
  load: (key: string) => Promise<T | undefined>;
  localTtlMs: number;
  clock: Clock;
  bus: ChangeBus;
  /** Second level, shared by instances; absent in the embedded default. */
  redis?: Pick<Redis, 'mget' | 'set' | 'incr' | 'pexpire'>;
  redisTtlMs?: number;
  stats?: CacheStats;
  /** A Redis read slower than this is abandoned for SQL (Redis is only a cache here); default 100 ms. */
  redisTimeoutMs?: number;
  /** Prefix of the Redis keys; default `sluice:`. */
  keyPrefix?: string;
  /** Bounds memory: the oldest entries go first. */
  maxEntries?: number;
  /** An invalidation that could not reach Redis or the bus; it is retried every second until it does. */
  onInvalidateError?: (error: unknown, key: string) => void;
  /**
   * At close, invalidations whose last try failed too: nobody will announce them now, and other
   * instances apply the change only when their cached copies expire (local TTL plus `redisTtlMs`).
   */
  onUnannounced?: (keys: string[]) => void;
}

const MISSING = '\u0000missing';

/** `promise`, or a rejection naming `what` after `ms`; the late answer, if any, is ignored. */
const withTimeout = <T>(promise: Promise<T>, ms: number, what = 'Redis config read'): Promise<T> =>
  withDeadline(promise, ms, `${what} timed out after ${ms} ms`);

/**
 * A read-through cache over SQL with a Redis level and bus invalidation. Concurrent misses of one
 * key share one load. `invalidate` drops the key here and in Redis and tells every instance.
 */
export class LiveCache<T> {
  private readonly local = new Map<string, { value: T | undefined; expiresAt: number; generation: number }>();
  private readonly inflight = new Map<string, Promise<T | undefined>>();
  /** Bumped on every invalidation, so a load that started before it is not cached after it. */
  private generation = 0;
  /** Listening starts at the first read: a cache only written through (a CLI command) needs no subscription. */
  private unsubscribe: (() => void) | undefined;
  /**
   * Keys changed in SQL whose invalidation has not yet reached Redis and the bus. Until it does,
   * this instance reads them from SQL (the Redis level still holds the old value), and a timer
   * retries the invalidation.
   */
  private readonly unshared = new Set<string>();
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LiveCacheOptions<T>) {}

  private listen(): () => void {
    const prefix = `${this.options.name}:`;
    return this.options.bus.subscribe((key) => {
      if (key === '*') this.dropAll();
      else if (key.startsWith(prefix)) this.dropLocal(key.slice(prefix.length));
    });
  }

  async get(key: string): Promise<T | undefined> {
    this.unsubscribe ??= this.listen();
    const now = this.options.clock.now();
    const cached = this.local.get(key);
    if (cached && cached.expiresAt > now) {
      this.options.stats?.lookup('local', 'hit');
      return cached.value;
    }
    this.options.stats?.lookup('local', 'miss');
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const load = this.loadThrough(key).finally(() => this.inflight.delete(key));
    this.inflight.set(key, load);
    return load;
  }

  private redisKeys(key: string): [value: string, version: string] {
    // One hash tag for both keys, so MGET works on Redis Cluster.
    const base = `${this.options.keyPrefix ?? 'sluice:'}cfg:{${this.options.name}:${key}}`;
    return [base, `${base}:v`];
  }

  /**
   * The Redis level stores `version|json`; a value counts only while its version equals the key's
   * version counter, which every invalidation increments. So a slow reader that loaded from SQL
   * before a change can never plant a stale value after it.
   */
  private async loadThrough(key: string): Promise<T | undefined> {
    const generation = this.generation;
    const { redis } = this.options;
    const [valueKey, versionKey] = this.redisKeys(key);
    let value: T | undefined;
    let found = false;
    let version = '0';
    if (redis && !this.unshared.has(key)) {
      try {
        const [text, currentVersion] = await withTimeout(redis.mget(valueKey, versionKey), this.options.redisTimeoutMs ?? 100);
        version = currentVersion ?? '0';
        const separator = text?.indexOf('|') ?? -1;
        if (text && separator > 0 && text.slice(0, separator) === version) {
          const json = text.slice(separator + 1);
          value = json === MISSING ? undefined : (JSON.parse(json) as T);
          found = true;
        }
      } catch {
        // Redis is a cache here: when it is down, SQL answers.
      }
      this.options.stats?.lookup('redis', found ? 'hit' : 'miss');
    }
    if (!found) {
      value = await this.options.load(key);
      this.options.stats?.lookup('sql', 'hit');
      if (redis) {
        const json = value === undefined ? MISSING : JSON.stringify(value);
        redis.set(valueKey, `${version}|${json}`, 'PX', this.options.redisTtlMs ?? 60_000).catch(() => undefined);
      }
    }
    if (generation === this.generation) {
      if (this.options.maxEntries && this.local.size >= this.options.maxEntries) {
        const oldest = this.local.keys().next();
        if (!oldest.done) this.local.delete(oldest.value);
      }
      this.local.set(key, { value, expiresAt: this.options.clock.now() + this.options.localTtlMs, generation });
    }
    return value;
  }

  /**
   * After a change in SQL: drop the key everywhere. Resolves once Redis and the bus have it, or,
   * when they cannot be reached (within a second), once the change is sure to reach them: SQL
   * already holds it, so the caller's change is made and must not be reported as failed. Until
   * then this instance reads the key from SQL, other instances drop their local copies when
   * their subscriber reconnects, and the invalidation is retried every second.
   */
  async invalidate(key: string): Promise<void> {
    this.dropLocal(key);
    try {
      await withTimeout(this.share(key), 1000, 'config invalidation');
      this.unshared.delete(key);
    } catch (error) {
      this.unshared.add(key);
      this.options.onInvalidateError?.(error, key);
      this.retryUnshared();
    }
  }

  /** Bumps the Redis version of `key` (its Redis value stops counting) and tells every instance. */
  private async share(key: string): Promise<void> {
    const { redis } = this.options;
    if (redis) {
      const versionKey = this.redisKeys(key)[1];
      await redis.incr(versionKey);
      await redis.pexpire(versionKey, 7 * 86_400_000);
    }
    await this.options.bus.publish(`${this.options.name}:${key}`);
  }

  private retryUnshared(): void {
    if (this.retryTimer) return;
    this.retryTimer = setInterval(() => {
      for (const key of this.unshared) {
        withTimeout(this.share(key), 1000, 'config invalidation').then(
          () => this.unshared.delete(key),
          () => undefined,
        );
      }
      if (this.unshared.size === 0) {
        clearInterval(this.retryTimer);
        this.retryTimer = undefined;
      }
    }, 1000);
    this.retryTimer.unref();
  }

  private dropLocal(key: string): void {
    this.generation++;
    this.local.delete(key);
  }

  private dropAll(): void {
    this.generation++;
    this.local.clear();
  }

  /**
   * Stops listening. Invalidations not yet shared get one last try (a second at most): a CLI
   * command closes right after its change, so its retry timer would never fire.
   */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.local.clear();
    clearInterval(this.retryTimer);
    this.retryTimer = undefined;
    const pending = [...this.unshared];
    this.unshared.clear();
    const lost: string[] = [];
    await Promise.all(pending.map((key) => withTimeout(this.share(key), 1000, 'config invalidation').catch(() => lost.push(key))));
    if (lost.length > 0) this.options.onUnannounced?.(lost);
  }
}

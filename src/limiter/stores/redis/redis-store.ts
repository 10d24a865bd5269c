/**
 * RedisStore: the limiter's counters in Redis (standalone or Cluster, ioredis 5), shared by every
 * process and host that uses the same Redis and prefix. Every decision is one atomic Lua script
 * step per subject; decisions issued concurrently are batched into one script call per slot.
 *
 * ```ts
 * import Redis from 'ioredis';
 * const limiter = new Limiter({ store: new RedisStore({ client: new Redis(url), keySecret: process.env.KEY_SECRET }) });
 * ```
 * Layout (keys, scripts, batching, memory): see docs and scripts/check-batch.lua.
 */
import type { Clock } from '../../clock.js';
import type { Decision, LimiterStore, NormalizedRule } from '../../types.js';
import { Batcher } from './batcher.js';
import { decodeBatch, encodeBatch, encodeRules, type PendingDecision } from './check-batch.js';
import { RedisKeys, type SubjectKeys } from './keys.js';
import { type ScriptClient, scripts } from './lua-script.js';
import { throwIfScriptError } from './script-errors.js';

/**
 * What RedisStore needs of its client: an ioredis `Redis` or `Cluster` fits
 * (`Pick<Redis, 'evalsha' | 'eval' | 'del'>` plus `isCluster`).
 */
export interface RedisStoreClient extends ScriptClient {
  del(...keys: string[]): Promise<number>;
  /** True for an ioredis `Cluster`: batches are then grouped by hash slot. */
  readonly isCluster?: boolean;
}

export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster`. The store never closes it. */
  client: RedisStoreClient;
  /** Prefix of every key, default `sluice:limiter`. Stores with different prefixes never share state. */
  prefix?: string;
  /**
   * Secret for HMAC-SHA256 of subjects (in key names) and request ids (log members). Without it
   * plain SHA-256 is used: recipients still never appear in clear, but their hashes can be
   * confirmed by guessing, and request-id members can be predicted.
   */
  keySecret?: string | Buffer;
  /**
   * Most decisions in one script call, 1 to 1000, default 128. Concurrent decisions of one slot are sent
   * together on the next `setImmediate` or as soon as this many are queued.
   */
  maxBatch?: number;
  /**
   * Source of `now` when a call passes none. Default: none, the scripts read Redis `TIME`, so
   * processes with skewed clocks agree. Tests pass a ManualClock.
   */
  clock?: Clock;
  /**
   * Floor of every TTL written, default 0 (log: 2 × the longest window, counters: the longest span
   * a counter matters, ban: its remaining time; see scripts/check-batch.lua for when each is set). TTLs
   * run on the Redis server's clock: a test or replay passing `now` from another clock raises
   * this so keys do not vanish while its clock stands still.
   */
  minTtlMs?: number;
  /**
   * Most entries a subject's log holds packed, 0 to 10,000, default 256: a log of at most this many
   * entries is one string (about 5 to 11 bytes an entry, read with the batch's MGET and written with
   * one SET), a longer one a sorted set (one Redis call per count; moved back into a packed log when
   * a trim leaves at most half this). 0: sorted sets only, as releases before 2026-12-01 wrote them
   * (for a rolling upgrade from one of those; see docs/upgrading.md). Both are always read.
   */
  packedLogMax?: number;
  /**
   * Hash-tag groups of subjects (see RedisKeysOptions.slotGroups), for Redis Cluster: decisions are
   * batched per slot, and with one slot per subject (the default) a batch holds one decision.
   * E.g. 16 per master. Changing it changes every key: set it when the deployment starts.
   */
  slotGroups?: number;
}

/** One queued undo: its subject's keys and its arguments (member, at, encoded rules). */
interface PendingUndo {
  keys: SubjectKeys;
  args: (string | number)[];
  resolve(): void;
  reject(error: unknown): void;
}

/** The Redis-backed {@link LimiterStore}; semantics in src/limiter/types.ts. */
export class RedisStore implements LimiterStore {
  private readonly client: RedisStoreClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock | undefined;
  private readonly minTtlMs: number;
  private readonly packedLogMax: number;
  private readonly cluster: boolean;
  private readonly batcher: Batcher<PendingDecision>;
  private readonly undoBatcher: Batcher<PendingUndo>;

  constructor(options: RedisStoreOptions) {
    if (!options?.client) throw new TypeError('RedisStore needs a client (an ioredis Redis or Cluster)');
    this.client = options.client;
    this.keys = new RedisKeys({
      prefix: options.prefix ?? 'sluice:limiter',
      keySecret: options.keySecret,
      ...(options.slotGroups === undefined ? {} : { slotGroups: options.slotGroups }),
    });
    this.clock = options.clock;
    this.minTtlMs = options.minTtlMs ?? 0;
    if (!Number.isInteger(this.minTtlMs) || this.minTtlMs < 0) throw new RangeError('minTtlMs must be a non-negative integer');
    this.packedLogMax = options.packedLogMax ?? 256;
    if (!Number.isInteger(this.packedLogMax) || this.packedLogMax < 0 || this.packedLogMax > 10_000) {
      throw new RangeError('packedLogMax must be an integer in [0, 10000]');
    }
    this.cluster = options.client.isCluster === true;
    const maxBatch = options.maxBatch ?? 128;
    // The script unpacks three keys per decision (ban, S, packed log) onto the Lua stack (its limit is ~8000).
    if (!Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > 1000) throw new RangeError('maxBatch must be an integer in [1, 1000]');
    this.batcher = new Batcher((items) => this.sendBatch(items), maxBatch);
    this.undoBatcher = new Batcher((items) => this.sendUndos(items), maxBatch);
  }

  /** The Redis keys of `subject` (for tools and tests: the subject itself is never in them). */
  keysOf(subject: string): SubjectKeys {
    return this.keys.subject(subject);
  }

  check(
    subject: string,
    rules: readonly NormalizedRule[],
    requestId: string | undefined,
    now: number | undefined,
    countAt?: number | undefined,
  ): Promise<Decision> {
    const member = requestId === undefined ? '' : this.keys.requestMember(requestId);
    return this.enqueue(subject, rules, false, member, now, countAt);
  }

  peek(subject: string, rules: readonly NormalizedRule[], now: number | undefined): Promise<Decision> {
    return this.enqueue(subject, rules, true, '', now, undefined);
  }

  /**
   * Takes back the attempt logged under `requestId` (its counters at min(the entry's score, `at`):
   * a scheduled entry is later than its decision time), or without an id the counters of an
   * anonymous attempt at `at`. Undos issued in the same turn go as one script call per slot (a
   * risk check denied by another rule takes back its window admissions: in bench/risk.ts about
   * half the checks did, one call each, until they were batched).
   */
  undo(subject: string, rules: readonly NormalizedRule[], requestId: string | undefined, at: number): Promise<void> {
    const keys = this.keys.subject(subject);
    const member = requestId === undefined ? '' : this.keys.requestMember(requestId);
    return new Promise<void>((resolve, reject) => {
      this.undoBatcher.add(this.cluster ? keys.slot : 0, { keys, args: [member, at, ...encodeRules(rules)], resolve, reject });
    });
  }

  async reset(subject: string): Promise<void> {
    const keys = this.keys.subject(subject);
    await this.client.del(keys.packed, keys.log, keys.ban, keys.counters, keys.scheduled);
  }

  async ban(subject: string, ms: number, now: number | undefined): Promise<void> {
    const keys = this.keys.subject(subject);
    const reply = await scripts.ban.run(this.client, 1, [keys.ban, ms, this.timeArg(now), this.minTtlMs]);
    throwIfScriptError(scripts.ban.name, reply);
  }

  /** Deletes the ban key: true when one was stored (an ended ban may linger until its TTL). */
  async unban(subject: string): Promise<boolean> {
    const keys = this.keys.subject(subject);
    return (await this.client.del(keys.ban)) === 1;
  }

  /** Sends every queued decision now instead of on the next tick. */
  async close(): Promise<void> {
    this.batcher.flush();
    this.undoBatcher.flush();
  }

  private enqueue(
    subject: string,
    rules: readonly NormalizedRule[],
    peek: boolean,
    member: string,
    now: number | undefined,
    countAt: number | undefined,
  ): Promise<Decision> {
    const keys = this.keys.subject(subject);
    const time = now ?? this.clock?.now();
    return new Promise<Decision>((resolve, reject) => {
      this.batcher.add(this.cluster ? keys.slot : 0, { keys, rules, peek, member, now: time, countAt, resolve, reject });
    });
  }

  private sendBatch(items: PendingDecision[]): void {
    const { numKeys, args } = encodeBatch(items, this.minTtlMs, this.packedLogMax);
    scripts.checkBatch.run(this.client, numKeys, args).then(
      (reply) => {
        let decisions: Decision[];
        try {
          decisions = decodeBatch(items, throwIfScriptError(scripts.checkBatch.name, reply));
        } catch (error) {
          for (const item of items) item.reject(error);
          return;
        }
        for (let i = 0; i < items.length; i++) items[i]!.resolve(decisions[i]!);
      },
      (error: unknown) => {
        for (const item of items) item.reject(error);
      },
    );
  }

  private sendUndos(items: PendingUndo[]): void {
    const args: (string | number)[] = [];
    for (const item of items) args.push(item.keys.log, item.keys.counters, item.keys.scheduled, item.keys.packed);
    args.push(this.minTtlMs, items.length);
    for (const item of items) for (const value of item.args) args.push(value);
    scripts.undo.run(this.client, 4 * items.length, args).then(
      (reply) => {
        try {
          throwIfScriptError(scripts.undo.name, reply);
        } catch (error) {
          for (const item of items) item.reject(error);
          return;
        }
        for (const item of items) item.resolve();
      },
      (error: unknown) => {
        for (const item of items) item.reject(error);
      },
    );
  }

  private timeArg(now: number | undefined): number | string {
    return now ?? this.clock?.now() ?? '';
  }
}

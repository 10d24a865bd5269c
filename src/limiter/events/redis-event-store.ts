/**
 * The event rules' state in Redis (standalone or Cluster). Ops issued in the same turn of the
 * event loop are grouped per hash slot and sent as one `risk-batch.lua` call per slot (the
 * limiter's {@link Batcher}); each subject's keys share one hash tag, a digest of the subject, so
 * no dimension value appears in clear in a key, and values reach Redis only as digests.
 *
 * Keys of a subject with tag T: `${prefix}:{T}:n` (last-n list), `:d` (distinct sorted set),
 * `:b:<bits>:<generation>` (seen filter), `:c` (a claimed request id), `:h:<generation>` (distinct above the exact range, a HyperLogLog). Retention: last-n 31 days after the last push; distinct
 * one window; seen two windows, or without a window `seenRetentionMs` after the last new value.
 */
import calculateSlot from 'cluster-key-slot';
import { Batcher } from '../stores/redis/batcher.js';
import { LuaScript, type ScriptClient } from '../stores/redis/lua-script.js';
import { throwIfScriptError } from '../stores/redis/script-errors.js';
import { BLOOM_BLOCK_BITS, ValueHasher } from './hashing.js';
import { type EventOp, type EventResult, type EventStore, RISK_LIMITS } from './types.js';

const script = LuaScript.fromFile(new URL('./scripts/', import.meta.url), 'risk-batch');

export interface RedisEventStoreOptions {
  /** An ioredis `Redis` or `Cluster` (the store never closes it). */
  client: ScriptClient & { readonly isCluster?: boolean };
  /** Key prefix, default `sluice:risk`. */
  prefix?: string;
  /** Secret of the subject tags and value digests (HMAC-SHA256); without it plain SHA-256. */
  keySecret?: string | Buffer;
  /** Ops per script call, default 256. */
  maxBatch?: number;
  /** TTL of last-n state after its last push, default 31 days. */
  lastNRetentionMs?: number;
  /** TTL of a `seen` filter without a window after its last new value, default 400 days. */
  seenRetentionMs?: number;
}

interface Pending {
  keys: string[];
  /** The call's time, '' for Redis TIME. */
  at: number | '';
  args: (string | number | Buffer)[];
  resolve(result: EventResult): void;
  reject(error: unknown): void;
}

/** Bit positions inside a block as one argument: 2 bytes each, big-endian (read by struct.unpack). */
function packPositions(positions: readonly number[]): Buffer {
  const packed = Buffer.allocUnsafe(2 * positions.length);
  for (let i = 0; i < positions.length; i++) packed.writeUInt16BE(positions[i]!, 2 * i);
  return packed;
}

export class RedisEventStore implements EventStore {
  private readonly client: RedisEventStoreOptions['client'];
  private readonly prefix: string;
  private readonly hasher: ValueHasher;
  private readonly batcher: Batcher<Pending>;
  private readonly lastNRetentionMs: number;
  private readonly seenRetentionMs: number;
  private readonly bases = new Map<string, { base: string; slot: number }>();

  constructor(options: RedisEventStoreOptions) {
    if (!options?.client) throw new TypeError('RedisEventStore needs a client (an ioredis Redis or Cluster)');
    this.client = options.client;
    this.prefix = options.prefix ?? 'sluice:risk';
    if (/[{}]/.test(this.prefix)) throw new TypeError('prefix must not contain { or }');
    this.hasher = new ValueHasher(options.keySecret);
    this.lastNRetentionMs = options.lastNRetentionMs ?? 31 * 86_400_000;
    this.seenRetentionMs = options.seenRetentionMs ?? 400 * 86_400_000;
    this.batcher = new Batcher((items) => this.send(items), options.maxBatch ?? 256);
  }

  /** The key base of a subject, `${prefix}:{tag}:` (for tools and tests), and its slot. */
  keyBase(subject: string): { base: string; slot: number } {
    const cached = this.bases.get(subject);
    if (cached) return cached;
    const tag = this.hasher.tag(subject);
    const base = { base: `${this.prefix}:{${tag}}:`, slot: calculateSlot(tag) };
    // Hot subjects are judged again and again; dropping the whole cache when full is O(1) amortised.
    if (this.bases.size >= 50_000) this.bases.clear();
    this.bases.set(subject, base);
    return base;
  }

  /**
   * Ops of one call that share a slot go in one script call; ops of different slots in one call
   * each per slot, all sent in the same turn. `now` applies to the whole call.
   */
  apply(ops: readonly EventOp[], now?: number): Promise<EventResult[]> {
    return Promise.all(ops.map((op) => this.enqueue(op, now)));
  }

  private enqueue(op: EventOp, now: number | undefined): Promise<EventResult> {
    const { base, slot } = this.keyBase(op.subject);
    let keys: string[];
    let args: (string | number | Buffer)[];
    if (op.kind === 'claim') {
      keys = [`${base}c`];
      args = ['c', op.ttlMs];
    } else if (op.kind === 'last-n') {
      keys = [`${base}n`];
      args = ['n', op.n, op.m, op.outcome, op.push ?? '', this.lastNRetentionMs];
    } else if (op.kind === 'distinct' && op.limit > RISK_LIMITS.distinctExact) {
      // As for seen filters: the generation needs the time before the script runs.
      if (now === undefined) now = Date.now();
      const generation = Math.floor(now / op.windowMs);
      keys = [`${base}h:${generation}`, `${base}h:${generation - 1}`];
      const retry = (generation + 1) * op.windowMs - now;
      args = ['h', op.limit, this.hasher.member(op.value), op.record ? 1 : 0, 2 * op.windowMs, retry];
    } else if (op.kind === 'distinct') {
      keys = [`${base}d`];
      args = ['d', op.windowMs, op.limit, this.hasher.member(op.value), op.record ? 1 : 0];
    } else {
      if (op.windowMs !== undefined && now === undefined) {
        // The generation needs the time before the script runs; without `now` the client's clock
        // picks it (a skew of s ms moves the turnover by s, the window's bound stays 1 to 2 windows).
        now = Date.now();
      }
      const generation = op.windowMs === undefined ? 0 : Math.floor(now! / op.windowMs);
      // `b`: a blocked filter (hashing.ts). Filters of the standard layout (`s:` keys, before
      // 2026-12) are not read: their values count as new once, and they expire by their TTL.
      const current = `${base}b:${op.bits}:${generation}`;
      const previous = op.windowMs === undefined ? current : `${base}b:${op.bits}:${generation - 1}`;
      keys = [current, previous];
      const ttl = op.windowMs === undefined ? this.seenRetentionMs : 2 * op.windowMs;
      const { block, positions } = this.hasher.positions(op.value, op.bits, op.hashes);
      args = ['s', op.bits / 8, op.record ? 1 : 0, ttl, block * (BLOOM_BLOCK_BITS / 8), packPositions(positions)];
    }
    return new Promise((resolve, reject) => {
      this.batcher.add(this.client.isCluster === true ? slot : 0, { keys, at: now ?? '', args, resolve, reject });
    });
  }

  private send(items: Pending[]): void {
    // One call per batch: its `now` is the first item's (items of one call share theirs; a batch
    // mixing calls with different explicit times is split by time below).
    const byTime = new Map<string | number, Pending[]>();
    for (const item of items) {
      const at = item.at;
      const group = byTime.get(at);
      if (group) group.push(item);
      else byTime.set(at, [item]);
    }
    for (const [at, group] of byTime) {
      const keys = group.flatMap((item) => item.keys);
      const args = [at, group.length, ...group.flatMap((item) => item.args)];
      script.run(this.client, keys.length, [...keys, ...args]).then(
        (reply) => {
          try {
            const rows = throwIfScriptError(script.name, reply) as [number, number, number][];
            group.forEach((item, i) => {
              const [fired, count, retry] = rows[i]!;
              item.resolve(
                fired === 1 && (item.args[0] === 'd' || item.args[0] === 'h')
                  ? { fired: true, count, retryAfterMs: retry }
                  : { fired: fired === 1, count },
              );
            });
          } catch (error) {
            for (const item of group) item.reject(error);
          }
        },
        (error: unknown) => {
          for (const item of group) item.reject(error);
        },
      );
    }
  }

  /** Sends what is queued now. */
  async close(): Promise<void> {
    this.batcher.flush();
  }
}

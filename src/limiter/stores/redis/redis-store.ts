/**
 * RedisStore: the limiter's counters in Redis (standalone or Cluster, ioredis 5), shared by every
 * process and host that uses the same Redis and prefix. Every decision is one atomic Lua script
 * step per subject; decisions issued concurrently are batched into one script call per node
 * (standalone: one; Cluster: per master, or per hash slot with `clusterBatches: 'slot'`).
 *
 * ```ts
 * import Redis from 'ioredis';
 * const limiter = new Limiter({ store: new RedisStore({ client: new Redis(url), keySecret: process.env.KEY_SECRET }) });
 * ```
 * Layout (keys, scripts, batching, memory): see docs and scripts/check-batch.lua.
 */
import type { Clock } from '../../clock.js';
import type { Decision, LimiterStore, StoreCheck, StorePeek, StoreUndo } from '../../types.js';
import { Batcher } from './batcher.js';
import { type DecisionMode, decodeBatch, encodeBatch, type PendingDecision } from './check-batch.js';
import { RedisKeys, type SubjectKeys } from './keys.js';
import { type LuaScript, type ScriptClient, scripts } from './lua-script.js';
import { STALE_SLOT_MAP, throwIfScriptError } from './script-errors.js';
import { encodeUndos, type PendingUndo } from './undo-batch.js';

/**
 * What RedisStore needs of its client: an ioredis `Redis` or `Cluster` fits
 * (`Pick<Redis, 'evalsha' | 'eval' | 'del'>` plus `isCluster`).
 */
export interface RedisStoreClient extends ScriptClient {
  del(...keys: string[]): Promise<number>;
  /** True for an ioredis `Cluster`: batches are then grouped per master (or per hash slot). */
  readonly isCluster?: boolean;
  /** A `Cluster`'s slot map: `slots[slot][0]` is the `host:port` of the slot's master. */
  readonly slots?: readonly (readonly string[] | undefined)[];
  /** A `Cluster`'s: reads the slot map again (called when a batch per node found it stale). */
  refreshSlotsCache?(): void;
}

/**
 * What one script call holds on a cluster: `node`, the decisions of every slot one master holds;
 * `slot`, those of one hash slot only.
 */
export type ClusterBatches = 'node' | 'slot';

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
   * a trim leaves at most half this). 0: sorted sets only (the longer logs' path alone, which the
   * tests exercise so). Both are always read.
   */
  packedLogMax?: number;
  /**
   * Hash-tag groups of subjects (see RedisKeysOptions.slotGroups), for Redis Cluster: decisions are
   * batched per slot, and with one slot per subject (the default) a batch holds one decision.
   * E.g. 16 per master. Changing it changes every key: set it when the deployment starts.
   */
  slotGroups?: number;
  /**
   * On a Redis Cluster, what one script call may hold, default `'node'`: the concurrent decisions
   * of every slot a master holds, in one call of the script's `allow-cross-slot-keys` form (Redis 7
   * and later; on an older server the store switches to `'slot'` by itself). `'slot'`: those of
   * one hash slot, i.e. of one subject unless `slotGroups` is set. A batch sent per node to a
   * node that no longer holds one of its slots (a resharding, a failover) writes nothing and is
   * sent again per slot, which follows the cluster's redirections.
   */
  clusterBatches?: ClusterBatches;
}

/** The Redis-backed {@link LimiterStore}; semantics in src/limiter/types.ts. */
export class RedisStore implements LimiterStore {
  private readonly client: RedisStoreClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock | undefined;
  private readonly minTtlMs: number;
  private readonly packedLogMax: number;
  private readonly cluster: boolean;
  /** Batches span slots (a cluster, `clusterBatches: 'node'`, and the server has taken them so far). */
  private perNode: boolean;
  /** A batch group per master `host:port`: -1, -2, ... (slot groups are the slots, >= 0). */
  private readonly nodeGroups = new Map<string, number>();
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
    if (options.clusterBatches !== undefined && options.clusterBatches !== 'node' && options.clusterBatches !== 'slot') {
      throw new RangeError("clusterBatches must be 'node' or 'slot'");
    }
    this.perNode = this.cluster && options.clusterBatches !== 'slot';
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

  check(request: StoreCheck): Promise<Decision> {
    return this.enqueue(request, 'check');
  }

  peek(request: StorePeek): Promise<Decision> {
    return this.enqueue(request, 'peek');
  }

  banIfHit(request: StorePeek): Promise<Decision> {
    return this.enqueue(request, 'ban-if-hit');
  }

  /**
   * Takes back the attempt logged under `requestId` (its counters at min(the entry's score, `at`):
   * a scheduled entry is later than its decision time), or without an id the counters of an
   * anonymous attempt at `at`. Undos issued in the same turn go as one script call per node (a
   * risk check denied by another rule takes back its window admissions: in bench/risk.ts about
   * half the checks did, one call each, until they were batched).
   */
  undo(request: StoreUndo): Promise<void> {
    const keys = this.keys.subject(request.subject);
    const requestMember = request.requestId === undefined ? '' : this.keys.requestMember(request.requestId);
    return new Promise<void>((resolve, reject) => {
      this.undoBatcher.add(this.groupOf(keys), { request, keys, requestMember, resolve, reject });
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

  /** Queues one decision for the next batch; a peek's request id and count time are never read. */
  private enqueue(request: StoreCheck, mode: DecisionMode): Promise<Decision> {
    const keys = this.keys.subject(request.subject);
    const { requestId } = request;
    const requestMember = mode !== 'check' || requestId === undefined ? '' : this.keys.requestMember(requestId);
    const now = request.now ?? this.clock?.now();
    return new Promise<Decision>((resolve, reject) => {
      this.batcher.add(this.groupOf(keys), { request, mode, keys, requestMember, now, resolve, reject });
    });
  }

  /** A subject's batch group: 0 standalone; on a cluster its master's group, or its slot while the map has no master for it. */
  private groupOf(keys: SubjectKeys): number {
    if (!this.cluster) return 0;
    const node = this.perNode ? this.client.slots?.[keys.slot]?.[0] : undefined;
    if (node === undefined) return keys.slot;
    let group = this.nodeGroups.get(node);
    if (group === undefined) {
      group = -1 - this.nodeGroups.size;
      this.nodeGroups.set(node, group);
    }
    return group;
  }

  /**
   * Runs one batch: per node (keys in ARGV, `perNodeScript`) when its items span slots, else
   * `script`. A batch the node refused as stale, or a server without cross-slot scripts, is
   * handed to `resend` again in groups of one slot, and `RESENT` returned.
   */
  private async runBatch<T extends { keys: SubjectKeys }>(
    items: T[],
    script: LuaScript,
    perNodeScript: LuaScript,
    encode: (perNode: boolean) => { numKeys: number; args: (string | number)[] },
    resend: (items: T[]) => void,
  ): Promise<unknown> {
    const perNode = this.perNode && items.some((item) => item.keys.slot !== items[0]!.keys.slot);
    const { numKeys, args } = encode(perNode);
    if (!perNode) return script.run(this.client, numKeys, args);
    try {
      const reply = await perNodeScript.run(this.client, numKeys, args);
      if (!(Array.isArray(reply) && reply.length === 1 && reply[0] === STALE_SLOT_MAP)) return reply;
      this.client.refreshSlotsCache?.();
    } catch (error) {
      if (!isCrossSlotUnsupported(error)) throw error;
      this.perNode = false;
    }
    const slots = new Map<number, T[]>();
    for (const item of items) {
      const group = slots.get(item.keys.slot);
      if (group === undefined) slots.set(item.keys.slot, [item]);
      else group.push(item);
    }
    for (const group of slots.values()) resend(group);
    return RESENT;
  }

  private sendBatch(items: PendingDecision[]): void {
    const encode = (perNode: boolean) => encodeBatch(items, this.minTtlMs, this.packedLogMax, perNode);
    this.runBatch(items, scripts.checkBatch, scripts.checkBatchPerNode, encode, (group) => this.sendBatch(group)).then(
      (reply) => {
        if (reply === RESENT) return;
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
    const encode = (perNode: boolean) => encodeUndos(items, this.minTtlMs, perNode);
    this.runBatch(items, scripts.undo, scripts.undoPerNode, encode, (group) => this.sendUndos(group)).then(
      (reply) => {
        if (reply === RESENT) return;
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

/** What {@link RedisStore.runBatch} returns for a batch it sent again per slot. */
const RESENT = Symbol('resent');

/** A server that cannot run `#!lua flags=...` scripts (before Redis 7) refuses them at compile time. */
function isCrossSlotUnsupported(error: unknown): boolean {
  return error instanceof Error && /near '#'|shebang|unknown lua flag|unexpected flag/i.test(error.message);
}

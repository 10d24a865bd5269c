/**
 * The event rules' state in Redis (standalone or Cluster). Ops issued in the same turn of the
 * event loop are grouped per hash slot and sent as one `risk-batch.lua` call per slot (the
 * limiter's {@link Batcher}); each subject's keys share one hash tag, a digest of the subject, so
 * no dimension value appears in clear in a key, and values reach Redis only as digests.
 *
 * Keys of a subject with tag T: `${prefix}:{T}:n` (last-n list), `:d` (distinct sorted set), `:w`
 * (a window's packed log) and `:wb` (its ban's end),
 * `:b:<bits>:<generation>` (seen filter; `:b:<bits>:<generation>:<segment>` for a filter larger than
 * one segment), `:c` (a claimed request id), `:h:<generation>` (distinct above the exact range, a HyperLogLog). Retention: last-n 31 days after the last push; distinct
 * one window; seen two windows, or without a window `seenRetentionMs` after the last new value.
 * Each op kind encodes itself and reads its reply row (./kinds/); this store batches them.
 */
import calculateSlot from 'cluster-key-slot';
import { Batcher } from '../stores/redis/batcher.js';
import { LuaScript, type ScriptClient } from '../stores/redis/lua-script.js';
import { throwIfScriptError } from '../stores/redis/script-errors.js';
import { ValueHasher } from './hashing.js';
import { opHandler } from './kinds/index.js';
import type { EncodedOp } from './kinds/kind.js';
import type { CheckOps, EventOp, EventResult, EventStore } from './types.js';

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

/** One op's (or one check's) part of a script call: keys, arguments, and the reply rows it owns. */
interface Pending {
  keys: string[];
  /** The call's time, '' for Redis TIME. */
  at: number | '';
  args: (string | number | Buffer)[];
  /** Reply rows of this item (a check: one for its header, then one per op). */
  rows: number;
  resolve(rows: [number, number, number][]): void;
  reject(error: unknown): void;
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
    this.decide = this.client.isCluster === true ? undefined : (check, now) => this.decideCheck(check, now);
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
    return Promise.all(
      ops.map((op) => {
        const encoded = this.encode(op, now);
        return this.enqueue(this.keyBase(op.subject).slot, encoded.now, encoded.keys, encoded.args, 1).then((rows) =>
          opHandler(op).result(rows[0]!),
        );
      }),
    );
  }

  /**
   * On a standalone server only: every key of a check must be in one script call, and a
   * Cluster spreads a check's subjects over slots. The check goes as one item (`'g'` header, a
   * veto mask, then its ops), so a batch never splits it.
   */
  readonly decide: EventStore['decide'];

  private decideCheck(check: CheckOps, now: number | undefined): Promise<EventResult[]> {
    const keys: string[] = [];
    let mask = '';
    const args: (string | number | Buffer)[] = ['g', check.ops.length, check.vetoed ? 1 : 0, ''];
    for (let i = 0; i < check.ops.length; i++) {
      // Generations are computed per op from `now`: fix it once for the whole check.
      const encoded = this.encode(check.ops[i]!, now);
      now = encoded.now;
      keys.push(...encoded.keys);
      args.push(...encoded.args);
      mask += check.vetoes[i] ? '1' : '0';
    }
    args[3] = mask;
    return this.enqueue(0, now, keys, args, 1 + check.ops.length).then((rows) =>
      check.ops.map((op, i) => opHandler(op).result(rows[i + 1]!)),
    );
  }

  private enqueue(slot: number, now: number | undefined, keys: string[], args: (string | number | Buffer)[], rows: number) {
    return new Promise<[number, number, number][]>((resolve, reject) => {
      this.batcher.add(this.client.isCluster === true ? slot : 0, { keys, at: now ?? '', args, rows, resolve, reject });
    });
  }

  private encode(op: EventOp, now: number | undefined): EncodedOp {
    const { base } = this.keyBase(op.subject);
    const { hasher, lastNRetentionMs, seenRetentionMs } = this;
    return opHandler(op).encode(op, { base, hasher, now, lastNRetentionMs, seenRetentionMs });
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
      const args = [at, group.reduce((sum, item) => sum + item.rows, 0), ...group.flatMap((item) => item.args)];
      script.run(this.client, keys.length, [...keys, ...args]).then(
        (reply) => {
          try {
            const flat = throwIfScriptError(script.name, reply) as number[];
            let p = 0;
            for (const item of group) {
              const rows: [number, number, number][] = [];
              for (let r = 0; r < item.rows; r++, p += 3) rows.push([flat[p]!, flat[p + 1]!, flat[p + 2]!]);
              item.resolve(rows);
            }
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

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
 */
import calculateSlot from 'cluster-key-slot';
import { Batcher } from '../stores/redis/batcher.js';
import { LuaScript, type ScriptClient } from '../stores/redis/lua-script.js';
import { throwIfScriptError } from '../stores/redis/script-errors.js';
import { seenSegment, ValueHasher } from './hashing.js';
import { type CheckOps, type EventOp, type EventResult, type EventStore, RISK_LIMITS } from './types.js';

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

/** An op encoded, `now` filled in when its keys need the time (generations). */
interface Encoded {
  keys: string[];
  args: (string | number | Buffer)[];
  now: number | undefined;
}

/** A reply row as an EventResult: `retryAfterMs` only for the kinds that give one, when fired (2: a window's ban). */
function resultOf(op: EventOp, [fired, count, retry]: [number, number, number]): EventResult {
  if (fired === 2) return { fired: true, banned: true, count, retryAfterMs: retry };
  return fired === 1 && (op.kind === 'distinct' || op.kind === 'window')
    ? { fired: true, count, retryAfterMs: retry }
    : { fired: fired === 1, count };
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
          resultOf(op, rows[0]!),
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
    return this.enqueue(0, now, keys, args, 1 + check.ops.length).then((rows) => check.ops.map((op, i) => resultOf(op, rows[i + 1]!)));
  }

  private enqueue(slot: number, now: number | undefined, keys: string[], args: (string | number | Buffer)[], rows: number) {
    return new Promise<[number, number, number][]>((resolve, reject) => {
      this.batcher.add(this.client.isCluster === true ? slot : 0, { keys, at: now ?? '', args, rows, resolve, reject });
    });
  }

  private encode(op: EventOp, now: number | undefined): Encoded {
    const { base } = this.keyBase(op.subject);
    let keys: string[];
    let args: (string | number | Buffer)[];
    if (op.kind === 'window') {
      keys = [`${base}w`, `${base}wb`];
      const member = op.member === undefined ? '' : this.hasher.digest('r', op.member).subarray(0, 4);
      args = ['w', op.windowMs, op.limit, member, op.record ? 1 : 0, op.banMs ?? 0];
    } else if (op.kind === 'claim') {
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
      // `b`: a blocked filter (hashing.ts), in segments when larger than one (`:<segment>` keys).
      // Filters of the standard layout (`s:` keys, before 2026-12) are not read: their values
      // count as new once, and they expire by their TTL.
      const { block, positions } = this.hasher.positions(op.value, op.bits, op.hashes);
      const { segment, offset, bytes } = seenSegment(block, op.bits / 8);
      const part = segment === undefined ? '' : `:${segment}`;
      const current = `${base}b:${op.bits}:${generation}${part}`;
      const previous = op.windowMs === undefined ? current : `${base}b:${op.bits}:${generation - 1}${part}`;
      keys = [current, previous];
      const ttl = op.windowMs === undefined ? this.seenRetentionMs : 2 * op.windowMs;
      args = ['s', bytes, op.record ? 1 : 0, ttl, offset, packPositions(positions)];
    }
    return { keys, args, now };
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

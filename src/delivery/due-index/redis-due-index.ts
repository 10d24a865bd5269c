/**
 * The due index in Redis: per partition, time-bucketed sorted sets plus a small sorted set listing
 * the buckets (keys.ts), written and claimed only through Lua scripts (scripts/*.lua) so every
 * operation is atomic and works on Redis Cluster (one hash tag per partition).
 */
import { randomBytes } from 'node:crypto';
import { LuaScript, type ScriptClient } from '../../limiter/index.js';
import type { DueEntry, DueIndex } from './due-index.js';
import { bucketOf, type DueIndexKeys, dueIndexKeys } from './keys.js';

const scripts = new URL('./scripts/', import.meta.url);
const addScript = LuaScript.fromFile(scripts, 'add');
const claimScript = LuaScript.fromFile(scripts, 'claim');
const removeScript = LuaScript.fromFile(scripts, 'remove');
const sizeScript = LuaScript.fromFile(scripts, 'size');
const nextDueScript = LuaScript.fromFile(scripts, 'next-due');
const finishRebuildScript = LuaScript.fromFile(scripts, 'finish-rebuild');

/** The part of an ioredis `Redis` or `Cluster` the index needs. */
export interface DueIndexClient extends ScriptClient {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
}

const BUILDING = 'building:';

/** The bulk lane of a partition: a partition of its own in Redis (its own hash tag), claimed after the transactional one. */
const bulkLane = (partition: string) => `${partition}:bulk`;
const laneOf = (partition: string, entry: DueEntry) => (entry.priority === 'bulk' ? bulkLane(partition) : partition);

/** Splits `entries` by lane, reading them once. */
async function byLane(partition: string, entries: AsyncIterable<DueEntry> | Iterable<DueEntry>): Promise<Map<string, DueEntry[]>> {
  const lanes = new Map<string, DueEntry[]>([
    [partition, []],
    [bulkLane(partition), []],
  ]);
  // An array (what the accept path hands over) is walked without a promise per entry.
  if (Array.isArray(entries)) for (const entry of entries as DueEntry[]) lanes.get(laneOf(partition, entry))!.push(entry);
  else for await (const entry of entries) lanes.get(laneOf(partition, entry))!.push(entry);
  return lanes;
}

export interface RedisDueIndexOptions {
  /** An ioredis `Redis` or `Cluster`. */
  client: DueIndexClient;
  /** Key prefix; default `sluice:`. */
  keyPrefix?: string;
  /** Width of a time bucket in ms; default 60 000. May change between runs: buckets are scored by their start. */
  bucketMs?: number;
  /** Entries per add script call (rebuild, addMany); default 1000. */
  writeBatch?: number;
  /** Upper bound on `limit` of one claim, so one script call stays short; default 5000. */
  maxClaim?: number;
}

export class RedisDueIndex implements DueIndex {
  private readonly client: DueIndexClient;
  private readonly prefix: string;
  readonly bucketMs: number;
  private readonly writeBatch: number;
  private readonly maxClaim: number;

  constructor(options: RedisDueIndexOptions) {
    this.client = options.client;
    this.prefix = options.keyPrefix ?? 'sluice:';
    this.bucketMs = options.bucketMs ?? 60_000;
    this.writeBatch = options.writeBatch ?? 1000;
    this.maxClaim = options.maxClaim ?? 5000;
    if (!Number.isInteger(this.bucketMs) || this.bucketMs <= 0)
      throw new Error(`bucketMs must be a positive integer, got ${this.bucketMs}`);
  }

  async add(partition: string, id: string, dueAt: number): Promise<void> {
    await this.addMany(partition, [{ id, dueAt }]);
  }

  async addMany(partition: string, entries: Iterable<DueEntry>): Promise<number> {
    let added = 0;
    for (const [lane, laneEntries] of await byLane(partition, entries)) {
      if (laneEntries.length > 0) added += await this.addAll(dueIndexKeys(this.prefix, lane), laneEntries);
    }
    return added;
  }

  /** The transactional lane first; the bulk lane gets only what it leaves of `limit` (two script calls at most). */
  async claim(partition: string, now: number, limit: number): Promise<string[]> {
    const take = Math.min(Math.floor(limit), this.maxClaim);
    if (!(take > 0)) return [];
    const claimed = await this.claimLane(partition, now, take);
    if (claimed.length < take) claimed.push(...(await this.claimLane(bulkLane(partition), now, take - claimed.length)));
    return claimed;
  }

  private async claimLane(lane: string, now: number, take: number): Promise<string[]> {
    const keys = dueIndexKeys(this.prefix, lane);
    return (await claimScript.run(this.client, 1, [keys.buckets, keys.bucketPrefix, now, take])) as string[];
  }

  async remove(partition: string, id: string, dueAt?: number): Promise<void> {
    for (const lane of [partition, bulkLane(partition)]) {
      const keys = dueIndexKeys(this.prefix, lane);
      await removeScript.run(this.client, 1, [
        keys.buckets,
        keys.bucketPrefix,
        id,
        dueAt === undefined ? '' : String(bucketOf(dueAt, this.bucketMs)),
      ]);
    }
  }

  /**
   * The rebuild marker's life: missing (never built, or wiped) → `building:<token>` while a
   * rebuild runs → `ready:<token>` when it ends and the marker still reads what it read at the
   * start. A wipe during the rebuild deletes the marker with the entries already written, so the
   * end check fails and the next tick rebuilds again; a rebuild that dies half way leaves
   * `building:`, which also reads as "needs rebuild". A periodic rebuild of a complete index
   * never clears the marker, so `needsRebuild` stays `false` throughout.
   */
  async rebuild(partition: string, entries: AsyncIterable<DueEntry> | Iterable<DueEntry>): Promise<number> {
    const token = randomBytes(8).toString('hex');
    const lanes = [partition, bulkLane(partition)].map((lane) => ({ keys: dueIndexKeys(this.prefix, lane), marker: '' }));
    for (const lane of lanes) {
      let marker = await this.client.get(lane.keys.rebuilt);
      if (marker === null || marker.startsWith(BUILDING)) {
        marker = `${BUILDING}${token}`;
        await this.client.set(lane.keys.rebuilt, marker);
      }
      lane.marker = marker;
    }
    // Streamed into both lanes as it is read: a wipe part way through leaves a marker the end check refuses.
    const [transactional, bulk] = lanes as [(typeof lanes)[number], (typeof lanes)[number]];
    const pending: [DueEntry[], DueEntry[]] = [[], []];
    let added = 0;
    const flush = async (which: 0 | 1) => {
      const batch = pending[which];
      pending[which] = [];
      if (batch.length > 0) added += await this.addAll((which === 0 ? transactional : bulk).keys, batch);
    };
    for await (const entry of entries) {
      const which = entry.priority === 'bulk' ? 1 : 0;
      pending[which].push(entry);
      if (pending[which].length >= this.writeBatch) await flush(which);
    }
    await flush(0);
    await flush(1);
    for (const lane of lanes) await finishRebuildScript.run(this.client, 1, [lane.keys.rebuilt, lane.marker, `ready:${token}`]);
    return added;
  }

  /** Either lane's marker missing (or mid-build) means the partition needs a rebuild. */
  async needsRebuild(partition: string): Promise<boolean> {
    for (const lane of [partition, bulkLane(partition)]) {
      const marker = await this.client.get(dueIndexKeys(this.prefix, lane).rebuilt);
      if (marker === null || marker.startsWith(BUILDING)) return true;
    }
    return false;
  }

  private async addAll(keys: DueIndexKeys, entries: AsyncIterable<DueEntry> | Iterable<DueEntry>): Promise<number> {
    let added = 0;
    let batch: (string | number)[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const args = batch;
      batch = [];
      added += (await addScript.run(this.client, 1, [keys.buckets, keys.bucketPrefix, ...args])) as number;
    };
    /** Queues the entry; true when the batch is full. */
    const add = ({ id, dueAt }: DueEntry): boolean => {
      if (!Number.isFinite(dueAt)) throw new Error(`due time of ${id} is not a number: ${dueAt}`);
      batch.push(bucketOf(dueAt, this.bucketMs), dueAt, id);
      return batch.length >= this.writeBatch * 3;
    };
    // An array (what the accept path hands over) is walked without a promise per entry.
    if (Array.isArray(entries)) {
      for (const entry of entries as DueEntry[]) if (add(entry)) await flush();
    } else for await (const entry of entries) if (add(entry)) await flush();
    await flush();
    return added;
  }

  async nextDueAt(partition: string, until: number): Promise<number | undefined> {
    let earliest: number | undefined;
    for (const lane of [partition, bulkLane(partition)]) {
      const keys = dueIndexKeys(this.prefix, lane);
      const due = await nextDueScript.run(this.client, 1, [keys.buckets, keys.bucketPrefix, until]);
      if (due !== null && (earliest === undefined || Number(due) < earliest)) earliest = Number(due);
    }
    return earliest;
  }

  async size(partition: string, dueBy?: number): Promise<number> {
    let total = 0;
    for (const lane of [partition, bulkLane(partition)]) {
      const keys = dueIndexKeys(this.prefix, lane);
      total += (await sizeScript.run(this.client, 1, [keys.buckets, keys.bucketPrefix, dueBy ?? ''])) as number;
    }
    return total;
  }
}

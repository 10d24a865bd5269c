/**
 * The due index in Redis: per partition, a sorted set per tenant lane plus a ready set listing
 * them by their earliest entry (keys.ts), written and claimed only through Lua scripts
 * (scripts/*.lua) so every operation is atomic and works on Redis Cluster (one hash tag per
 * partition).
 */
import { randomBytes } from 'node:crypto';
import type { SlotState } from '../../core/fair-share.js';
import { LuaScript, type ScriptClient } from '../../limiter/index.js';
import type { DueEntry, DueIndex } from './due-index.js';
import { type DueIndexKeys, dueIndexKeys, queueOf } from './keys.js';

const scripts = new URL('./scripts/', import.meta.url);
const addScript = LuaScript.fromFile(scripts, 'add');
const claimScript = LuaScript.fromFile(scripts, 'claim');
const sizeScript = LuaScript.fromFile(scripts, 'size');
const nextDueScript = LuaScript.fromFile(scripts, 'next-due');
const finishRebuildScript = LuaScript.fromFile(scripts, 'finish-rebuild');

/** The part of an ioredis `Redis` or `Cluster` the index needs. */
export interface DueIndexClient extends ScriptClient {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
}

const BUILDING = 'building:';

export interface RedisDueIndexOptions {
  /** An ioredis `Redis` or `Cluster`. */
  client: DueIndexClient;
  /** Key prefix; default `sluice:`. */
  keyPrefix?: string;
  /** Entries per add script call (rebuild, addMany); default 1000. */
  writeBatch?: number;
  /** Upper bound on `limit` of one claim, so one script call stays short; default 5000. */
  maxClaim?: number;
}

export class RedisDueIndex implements DueIndex {
  private readonly client: DueIndexClient;
  private readonly prefix: string;
  private readonly writeBatch: number;
  private readonly maxClaim: number;

  constructor(options: RedisDueIndexOptions) {
    this.client = options.client;
    this.prefix = options.keyPrefix ?? 'sluice:';
    this.writeBatch = options.writeBatch ?? 1000;
    this.maxClaim = options.maxClaim ?? 5000;
  }

  addMany(partition: string, entries: Iterable<DueEntry>): Promise<number> {
    return this.addAll(dueIndexKeys(this.prefix, partition), entries);
  }

  async claim(partition: string, now: number, limit: number, slots?: SlotState): Promise<string[]> {
    const take = Math.min(Math.floor(limit), this.maxClaim);
    if (!(take > 0)) return [];
    const keys = dueIndexKeys(this.prefix, partition);
    const state = slots ?? { concurrency: take, inFlight: new Map<string, number>(), weights: new Map<string, number>() };
    const held = [...state.inFlight].flat();
    const weights = [...state.weights].filter(([, weight]) => weight !== 1).flat();
    return (await claimScript.run(this.client, 1, [
      keys.ready,
      keys.queuePrefix,
      now,
      take,
      state.concurrency,
      state.minFree ?? 1,
      state.after ?? '',
      held.length / 2,
      ...held,
      weights.length / 2,
      ...weights,
    ])) as string[];
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
    const keys = dueIndexKeys(this.prefix, partition);
    let marker = await this.client.get(keys.rebuilt);
    if (marker === null || marker.startsWith(BUILDING)) {
      marker = `${BUILDING}${token}`;
      await this.client.set(keys.rebuilt, marker);
    }
    // Streamed as it is read: a wipe part way through leaves a marker the end check refuses.
    const added = await this.addAll(keys, entries);
    await finishRebuildScript.run(this.client, 1, [keys.rebuilt, marker, `ready:${token}`]);
    return added;
  }

  async needsRebuild(partition: string): Promise<boolean> {
    const marker = await this.client.get(dueIndexKeys(this.prefix, partition).rebuilt);
    return marker === null || marker.startsWith(BUILDING);
  }

  private async addAll(keys: DueIndexKeys, entries: AsyncIterable<DueEntry> | Iterable<DueEntry>): Promise<number> {
    let added = 0;
    let batch: (string | number)[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const args = batch;
      batch = [];
      added += (await addScript.run(this.client, 1, [keys.ready, keys.queuePrefix, ...args])) as number;
    };
    /** Queues the entry; true when the batch is full. */
    const add = (entry: DueEntry): boolean => {
      if (!Number.isFinite(entry.dueAt)) throw new Error(`due time of ${entry.id} is not a number: ${entry.dueAt}`);
      batch.push(queueOf(entry), entry.dueAt, entry.id);
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
    const keys = dueIndexKeys(this.prefix, partition);
    const due = await nextDueScript.run(this.client, 1, [keys.ready, keys.queuePrefix, until]);
    return due === null ? undefined : Number(due);
  }

  async size(partition: string, dueBy?: number): Promise<number> {
    const keys = dueIndexKeys(this.prefix, partition);
    return (await sizeScript.run(this.client, 1, [keys.ready, keys.queuePrefix, dueBy ?? ''])) as number;
  }
}

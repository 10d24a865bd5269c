/**
 * TokenLeases: hot token-bucket counters spent in process from blocks leased from Redis, so a
 * subject checked 100,000 times a second costs Redis one call per block, not per decision.
 *
 * For a rule with `lease: true` (token-bucket only), an instance leases a block of tokens for
 * (subject, rule) with one script call (`scripts/lease-1.lua`: GCRA, the block taken from the bucket
 * at once), answers checks from it locally, and gives unused tokens back: when the block is older
 * than `leaseMs` (with its next lease, or by a sweep), on undo, and on {@link TokenLeases.close}.
 * Blocks are sized to this instance's observed rate: the tokens it spent since its last lease,
 * scaled to `leaseMs`, at least 1 and at most the rule's rate over `leaseMs` (`limit × leaseMs / w`).
 *
 * Bounds (docs/limiter.md, "Token leases"):
 * - Over any span, the tokens admitted by all instances are at most those Redis granted and did not
 *   get back; Redis grants by exact GCRA, so the total never exceeds what exact checks admit over
 *   the span. An instance that dies loses its unused tokens (under-admission, at most one block each).
 * - A token is spent at most `leaseMs` after its lease was sent, so in any one window an exact bucket's
 *   admissions may be shifted by up to `leaseMs`: at most `limit × leaseMs / windowMs` extra per window.
 * - A denial (no token left in Redis) is answered locally until the retry time Redis gave, measured
 *   from when the lease was sent (never earlier than an exact check would admit, modulo tokens given
 *   back meanwhile).
 * - `counts` of a leased rule are estimates (the tokens in use Redis reported at the last lease,
 *   minus those this instance still holds); `at` is the local clock unless `now` is passed.
 */
import { type Clock, systemClock } from '../clock.js';
import { RedisKeys } from '../stores/redis/keys.js';
import { LuaScript, type ScriptClient } from '../stores/redis/lua-script.js';
import type { Decision, NormalizedRule, StoreCheck, StoreUndo } from '../types.js';

export interface TokenLeasesOptions {
  /** An ioredis `Redis` or `Cluster` (every key of a lease shares one hash tag). Never closed here. */
  client: ScriptClient;
  /** Key prefix, default `sluice:limiter:lease`. */
  prefix?: string;
  /** Secret for HMAC of subjects in key names (as RedisStore's `keySecret`). */
  keySecret?: string | Buffer;
  /** Longest a leased token is held before it is given back, ms (default 100). */
  leaseMs?: number;
  /** Most tokens in one block (default 10,000). */
  maxBlock?: number;
  /** Local clock (block ages, cached denials). Default: the system clock. */
  clock?: Clock;
  /** Floor of the TTL of lease keys (tests passing `now` from another clock), default 0. */
  minTtlMs?: number;
  /** Told of every token asked: `hit` from a local block (or a cached denial), `miss` needed Redis. */
  onLookup?: (result: 'hit' | 'miss') => void;
}

interface Lease {
  readonly key: string;
  readonly rule: NormalizedRule;
  /** Tokens held, usable until `expires` (local clock). */
  tokens: number;
  expires: number;
  /** Tokens to give back with the next script call (expired, undone). */
  back: number;
  /** Tokens spent since the last lease was sent, and when it was sent (local): the observed rate. */
  spent: number;
  leasedAt: number;
  /** Tokens in use Redis reported at the last lease. */
  inUse: number;
  /** A denial answered locally until this local time; `deniedEnd` the same on the decision clock. */
  deniedUntil: number;
  deniedEnd: number;
  /** Callers waiting for the lease in flight. */
  waiting: number;
  fetching: Promise<void> | undefined;
  lastUsed: number;
}

const script = LuaScript.fromFile(new URL('./scripts/', import.meta.url), 'lease-1');

/** Leased token-bucket decisions; used by the Limiter for rule sets whose rules all have `lease: true`. */
export class TokenLeases {
  readonly leaseMs: number;
  private readonly client: ScriptClient;
  private readonly keys: RedisKeys;
  private readonly maxBlock: number;
  private readonly clock: Clock;
  private readonly minTtlMs: number;
  private readonly onLookup: ((result: 'hit' | 'miss') => void) | undefined;
  private readonly leases = new Map<string, Lease>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** Tokens answered from local blocks, tokens that needed a script call, and script calls made. */
  hits = 0;
  misses = 0;
  calls = 0;

  constructor(options: TokenLeasesOptions) {
    if (!options?.client) throw new TypeError('TokenLeases needs a client (an ioredis Redis or Cluster)');
    this.client = options.client;
    this.keys = new RedisKeys({ prefix: options.prefix ?? 'sluice:limiter:lease', keySecret: options.keySecret });
    this.leaseMs = options.leaseMs ?? 100;
    this.maxBlock = options.maxBlock ?? 10_000;
    this.minTtlMs = options.minTtlMs ?? 0;
    if (!Number.isInteger(this.leaseMs) || this.leaseMs < 1) throw new RangeError('leaseMs must be a positive integer');
    if (!Number.isInteger(this.maxBlock) || this.maxBlock < 1) throw new RangeError('maxBlock must be a positive integer');
    if (!Number.isInteger(this.minTtlMs) || this.minTtlMs < 0) throw new RangeError('minTtlMs must be a non-negative integer');
    this.clock = options.clock ?? systemClock;
    this.onLookup = options.onLookup;
  }

  /** Tokens held in process now, over every lease (for tests and metrics). */
  get held(): number {
    let held = 0;
    for (const lease of this.leases.values()) held += lease.tokens;
    return held;
  }

  /**
   * Decides a check of a set whose rules are all leased token buckets (one token from each rule).
   * Its `requestId` is not read (a leased token is spent again by a repeated id) and needs no
   * `countAt` (a token bucket counts at the decision time).
   */
  async check(request: StoreCheck): Promise<Decision> {
    if (this.closed) throw new Error('TokenLeases is closed');
    const { subject, rules, now } = request;
    const taken: Lease[] = [];
    const counts: number[] = [];
    for (let i = 0; i < rules.length; i++) {
      const lease = this.leaseOf(subject, rules[i]!);
      const denial = await this.take(lease, now);
      if (denial !== undefined) {
        // Tokens already taken from the other rules stay in their blocks.
        for (const other of taken) other.tokens++;
        return {
          allowed: false,
          code: 'RATE_LIMITED',
          rule: i,
          retryAfterMs: denial,
          counts: rules.map(() => 0),
          at: now ?? this.clock.now(),
        };
      }
      taken.push(lease);
      counts.push(Math.max(0, lease.inUse - lease.tokens - 1));
    }
    return { allowed: true, code: 'OK', retryAfterMs: 0, counts, at: now ?? this.clock.now() };
  }

  /** Takes back an admitted leased attempt: its tokens return to the blocks (or to Redis with the next call). */
  undo(request: StoreUndo): void {
    const { subject, rules } = request;
    const local = this.clock.now();
    for (const rule of rules) {
      const lease = this.leases.get(this.leaseKey(subject, rule));
      if (!lease) continue;
      if (local < lease.expires) lease.tokens++;
      else lease.back++;
      lease.spent = Math.max(0, lease.spent - 1);
    }
  }

  /** Gives every unused token back to Redis and stops the sweep; later checks reject. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.allSettled([...this.leases.values()].map((lease) => lease.fetching));
    await Promise.allSettled([...this.leases.values()].map((lease) => this.giveBack(lease, true)));
    this.leases.clear();
  }

  /** Undefined when a token was taken; else the retry delay of the denial. */
  private async take(lease: Lease, now: number | undefined): Promise<number | undefined> {
    for (;;) {
      const local = this.clock.now();
      lease.lastUsed = local;
      if (lease.tokens > 0 && local < lease.expires) {
        lease.tokens--;
        lease.spent++;
        this.hits++;
        this.onLookup?.('hit');
        return undefined;
      }
      if (local < lease.deniedUntil) {
        this.hits++;
        this.onLookup?.('hit');
        return now === undefined ? lease.deniedUntil - local : Math.max(1, lease.deniedEnd - now);
      }
      if (lease.fetching) {
        lease.waiting++;
        try {
          await lease.fetching;
        } finally {
          lease.waiting--;
        }
        continue;
      }
      this.misses++;
      this.onLookup?.('miss');
      lease.fetching = this.fetch(lease, now).finally(() => {
        lease.fetching = undefined;
      });
      await lease.fetching;
    }
  }

  /** One script call: give back what expired, lease a block sized to the observed rate. */
  private async fetch(lease: Lease, now: number | undefined): Promise<void> {
    const sentAt = this.clock.now();
    if (lease.tokens > 0) {
      lease.back += lease.tokens;
      lease.tokens = 0;
    }
    const { rule } = lease;
    const cap = Math.max(1, Math.min(this.maxBlock, Math.floor((rule.limit * this.leaseMs) / rule.windowMs)));
    const elapsed = Math.max(1, sentAt - lease.leasedAt);
    const rate = lease.leasedAt === 0 ? 1 : Math.ceil((lease.spent * this.leaseMs) / elapsed);
    const want = Math.min(cap, Math.max(1, rate, lease.waiting + 1));
    const back = lease.back;
    lease.back = 0;
    let reply: unknown;
    try {
      this.calls++;
      reply = await script.run(this.client, 1, [lease.key, want, back, rule.windowMs, rule.limit, now ?? '', this.minTtlMs]);
    } catch (error) {
      lease.back += back;
      throw error;
    }
    if (!Array.isArray(reply)) throw new Error(`lease-1 failed (${String(reply)})`);
    const granted = Number(reply[0]);
    const retry = Number(reply[1]);
    const decisionTime = Number(reply[3]);
    lease.inUse = Number(reply[2]);
    lease.spent = 0;
    lease.leasedAt = sentAt;
    if (this.closed) {
      // Closed while in flight: the grant goes straight back.
      lease.back += granted;
      return;
    }
    lease.tokens = granted;
    lease.expires = sentAt + this.leaseMs;
    if (granted === 0) {
      lease.deniedUntil = sentAt + retry;
      lease.deniedEnd = decisionTime + retry;
    }
    this.startSweep();
  }

  private async giveBack(lease: Lease, all: boolean): Promise<void> {
    const back = lease.back + (all || this.clock.now() >= lease.expires ? lease.tokens : 0);
    if (back === 0) return;
    lease.back = 0;
    if (all || this.clock.now() >= lease.expires) lease.tokens = 0;
    try {
      this.calls++;
      await script.run(this.client, 1, [lease.key, 0, back, lease.rule.windowMs, lease.rule.limit, '', this.minTtlMs]);
    } catch {
      // Lost: those tokens stay counted in Redis until the bucket refills (the strict side).
    }
  }

  private startSweep(): void {
    if (this.sweeper || this.closed) return;
    // Expired blocks give their tokens back; idle leases are forgotten. Unref'd: never keeps a process up.
    this.sweeper = setInterval(() => {
      const local = this.clock.now();
      for (const [key, lease] of this.leases) {
        if (lease.fetching) continue;
        if (lease.back > 0 || (lease.tokens > 0 && local >= lease.expires)) void this.giveBack(lease, false);
        else if (lease.tokens === 0 && local - lease.lastUsed > 10 * this.leaseMs) this.leases.delete(key);
      }
      if (this.leases.size === 0 && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, this.leaseMs);
    this.sweeper.unref?.();
  }

  private leaseOf(subject: string, rule: NormalizedRule): Lease {
    const key = this.leaseKey(subject, rule);
    let lease = this.leases.get(key);
    if (!lease) {
      lease = {
        key,
        rule,
        tokens: 0,
        expires: 0,
        back: 0,
        spent: 0,
        leasedAt: 0,
        inUse: 0,
        deniedUntil: 0,
        deniedEnd: 0,
        waiting: 0,
        fetching: undefined,
        lastUsed: 0,
      };
      this.leases.set(key, lease);
    }
    return lease;
  }

  /** A token bucket is identified by (window, limit), as in the exact store. */
  private leaseKey(subject: string, rule: NormalizedRule): string {
    return `${this.keys.subject(subject).counters}:${rule.windowMs}:${rule.limit}`;
  }
}

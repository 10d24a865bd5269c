/**
 * A lease lock in Redis, Redisson style: `SET key token NX PX lease` to acquire, a watchdog that
 * renews every lease/3 with a compare-and-pexpire script, a compare-and-delete script to release.
 * One key per lock, so it works unchanged on Redis Cluster.
 *
 * Safety rests on the local monotonic clock, not on timers: the holder notes `performance.now()`
 * just BEFORE sending each successful acquire or renewal. Redis started the lease no earlier than
 * that, so the lease is surely ours until that instant + lease (minus a small allowance for clock
 * rate drift). `isHeld()` compares against that bound on every call, so a process that was paused
 * (SIGSTOP, GC, blocked event loop) sees `false` the moment it runs again, even before its late
 * timers fire.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { LuaScript, type ScriptClient } from '../../limiter/index.js';
import type { LeaseLock, LockFactory, LockLossReason } from './lease-lock.js';

const scripts = new URL('./scripts/', import.meta.url);
const renewScript = LuaScript.fromFile(scripts, 'renew');
const releaseScript = LuaScript.fromFile(scripts, 'release');

/** The part of an ioredis `Redis` or `Cluster` the lock needs. */
export interface LockClient extends ScriptClient {
  set(key: string, value: string, millisecondsToken: 'PX', milliseconds: number, nx: 'NX'): Promise<'OK' | null>;
}

/** What the lock reports for logs and metrics. Never contains the owner token. */
export type LockEvent =
  | { type: 'lost'; name: string; reason: LockLossReason }
  | { type: 'renewal-error'; name: string; error: unknown }
  | { type: 'release-error'; name: string; error: unknown }
  | { type: 'listener-error'; name: string; error: unknown };

export interface RedisLeaseLockOptions {
  client: LockClient;
  /** Lock name; `{` and `}` are not allowed (the name becomes the key's hash tag). */
  name: string;
  /** Lease in ms (DESIGN.md §6: 5 s). A dead holder blocks the lock for at most this long. */
  leaseMs?: number;
  /** Watchdog period in ms; default `leaseMs / 3`, so two renewals may fail before the lease ends. */
  renewEveryMs?: number;
  /** Prefix of the Redis key `<prefix>lock:{<name>}`. Default `sluice:`. */
  keyPrefix?: string;
  /** Monotonic milliseconds (default `performance.now()`); injected by tests. Never wall time. */
  monotonicNow?: () => number;
  /**
   * Who holds the lock, readable by operators: the key's value is `<ownerId>:<random>`.
   * Default `<hostname>:<pid>`.
   */
  ownerId?: string;
  /** Receives losses and swallowed errors, for logs and metrics. */
  onEvent?: (event: LockEvent) => void;
}

export const DEFAULT_LEASE_MS = 5000;

/** One acquisition: its own token, so nothing done for an older tenure can touch a newer one. */
interface Tenure {
  readonly token: string;
  /** Monotonic instant until which the lease is surely ours. */
  validUntil: number;
  renewTimer?: NodeJS.Timeout;
  expiryTimer?: NodeJS.Timeout;
}

export class RedisLeaseLock implements LeaseLock {
  readonly name: string;
  readonly key: string;
  readonly leaseMs: number;
  readonly renewEveryMs: number;
  private readonly client: LockClient;
  private readonly now: () => number;
  private readonly onEvent: (event: LockEvent) => void;
  private readonly ownerId: string;
  /** Redlock's allowance for the two clocks running at slightly different rates. */
  private readonly driftMs: number;
  private readonly listeners = new Set<() => void>();
  private tenure: Tenure | undefined;
  private acquiring: Promise<boolean> | undefined;
  /**
   * The token of an acquire whose answer never came (a timeout, a dropped connection). Its SET may
   * still have run, or may run later: the client sends a timed-out command still queued when it
   * reconnects. The next attempt reclaims the key under this token instead of finding it taken
   * by nobody for a whole lease.
   */
  private uncertainToken: string | undefined;

  constructor(options: RedisLeaseLockOptions) {
    if (/[{}]/.test(options.name) || options.name === '') throw new Error(`invalid lock name "${options.name}"`);
    this.name = options.name;
    this.client = options.client;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.renewEveryMs = options.renewEveryMs ?? Math.floor(this.leaseMs / 3);
    if (!(this.leaseMs > 0) || !(this.renewEveryMs > 0) || this.renewEveryMs >= this.leaseMs) {
      throw new Error(`lock "${this.name}": need 0 < renewEveryMs (${this.renewEveryMs}) < leaseMs (${this.leaseMs})`);
    }
    this.key = `${options.keyPrefix ?? 'sluice:'}lock:{${this.name}}`;
    this.now = options.monotonicNow ?? (() => performance.now());
    this.onEvent = options.onEvent ?? (() => {});
    this.ownerId = options.ownerId ?? `${hostname()}:${process.pid}`;
    this.driftMs = Math.ceil(this.leaseMs * 0.01) + 2;
  }

  isHeld(): boolean {
    const tenure = this.tenure;
    if (tenure === undefined) return false;
    if (this.now() >= tenure.validUntil) {
      this.lose(tenure, 'lease-expired');
      return false;
    }
    return true;
  }

  onLost(listener: () => void): () => void {
    const own = () => listener();
    this.listeners.add(own);
    return () => {
      this.listeners.delete(own);
    };
  }

  tryAcquire(): Promise<boolean> {
    if (this.isHeld()) return Promise.resolve(true);
    this.acquiring ??= this.acquire().finally(() => {
      this.acquiring = undefined;
    });
    return this.acquiring;
  }

  async release(): Promise<void> {
    if (this.acquiring !== undefined) await this.acquiring.catch(() => false);
    const tenure = this.tenure;
    if (tenure === undefined) return;
    this.tenure = undefined;
    clearTimers(tenure);
    await this.deleteIfOwner(tenure.token);
  }

  private async acquire(): Promise<boolean> {
    const uncertain = this.uncertainToken;
    const token = uncertain ?? `${this.ownerId}:${randomBytes(12).toString('hex')}`;
    this.uncertainToken = token; // until an answer says whose the key is
    let sentAt = this.now();
    let won = uncertain !== undefined && (await renewScript.run(this.client, 1, [this.key, token, this.leaseMs])) === 1;
    if (!won) {
      sentAt = this.now();
      won = (await this.client.set(this.key, token, 'PX', this.leaseMs, 'NX')) === 'OK';
    }
    // Answered: the key is ours under this token, or someone else's (one connection answers in
    // order, so an earlier attempt of ours cannot land after this one).
    this.uncertainToken = undefined;
    if (!won) return false;
    const tenure: Tenure = { token, validUntil: sentAt + this.leaseMs - this.driftMs };
    if (this.now() >= tenure.validUntil) {
      // The answer came after the lease we were granted had already run out: never act on it.
      void this.deleteIfOwner(token);
      return false;
    }
    this.tenure = tenure;
    this.armExpiry(tenure);
    this.scheduleRenewal(tenure, this.renewEveryMs);
    return true;
  }

  private async renew(tenure: Tenure): Promise<void> {
    if (this.tenure !== tenure || !this.isHeld()) return;
    const sentAt = this.now();
    let reply: unknown;
    try {
      reply = await renewScript.run(this.client, 1, [this.key, tenure.token, this.leaseMs]);
    } catch (error) {
      if (this.tenure !== tenure) return;
      this.onEvent({ type: 'renewal-error', name: this.name, error });
      // A transient error is not a loss: retry soon; the local bound (expiry timer, isHeld) still
      // ends the tenure on time if Redis stays unreachable.
      if (this.isHeld()) this.scheduleRenewal(tenure, Math.max(1, Math.floor(this.renewEveryMs / 4)));
      return;
    }
    if (this.tenure !== tenure) return; // released or lost while the renewal was in flight
    if (this.now() >= tenure.validUntil) {
      // Renewed, but later than our lease end: between the two we may have been observed as
      // not holding, so we do not resume; lose() gives the key back.
      this.lose(tenure, 'lease-expired');
      return;
    }
    if (reply !== 1) {
      this.lose(tenure, 'renewal-refused');
      return;
    }
    tenure.validUntil = sentAt + this.leaseMs - this.driftMs;
    this.armExpiry(tenure);
    this.scheduleRenewal(tenure, this.renewEveryMs);
  }

  /**
   * Timers are unref'd: the lock must never be what keeps a process alive. A worker stays alive
   * through its own loop (and its Redis connection); a process that exits without `release()`
   * loses the lock within one lease anyway, while a ref'd watchdog would hide a missing
   * `release()` by hanging the shutdown forever and keep the partition locked by a zombie.
   */
  private scheduleRenewal(tenure: Tenure, delayMs: number): void {
    clearTimeout(tenure.renewTimer);
    tenure.renewTimer = setTimeout(() => void this.renew(tenure), delayMs).unref();
  }

  /** Fires at the local lease end so listeners hear of a stalled renewal without anyone polling. */
  private armExpiry(tenure: Tenure): void {
    clearTimeout(tenure.expiryTimer);
    const delayMs = Math.max(0, Math.ceil(tenure.validUntil - this.now())) + 1;
    tenure.expiryTimer = setTimeout(() => {
      if (this.tenure === tenure) this.isHeld();
    }, delayMs).unref();
  }

  private lose(tenure: Tenure, reason: LockLossReason): void {
    // Order matters: not held first, listeners second, everything else after.
    this.tenure = undefined;
    clearTimers(tenure);
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (error) {
        this.onEvent({ type: 'listener-error', name: this.name, error });
      }
    }
    this.onEvent({ type: 'lost', name: this.name, reason });
    // The key may still carry our token (a late renewal succeeded): give it back so the next
    // holder does not wait a whole lease. A no-op when it is already someone else's.
    if (reason === 'lease-expired') void this.deleteIfOwner(tenure.token);
  }

  private async deleteIfOwner(token: string): Promise<void> {
    try {
      await releaseScript.run(this.client, 1, [this.key, token]);
    } catch (error) {
      this.onEvent({ type: 'release-error', name: this.name, error });
    }
  }
}

function clearTimers(tenure: Tenure): void {
  clearTimeout(tenure.renewTimer);
  clearTimeout(tenure.expiryTimer);
}

export type RedisLockFactoryOptions = Omit<RedisLeaseLockOptions, 'name'>;

/** Locks sharing one client and settings: `createRedisLockFactory({client}).createLock('dispatch:sms:0')`. */
export function createRedisLockFactory(options: RedisLockFactoryOptions): LockFactory {
  return { createLock: (name) => new RedisLeaseLock({ ...options, name }) };
}

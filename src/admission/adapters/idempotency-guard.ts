/**
 * The admission chain's IdempotencyGuard: a key held in this process is a promise its twins await
 * (no polling); with Redis the key is also a lease lock (`SET NX PX`, renewed while held), so
 * twins sent to other instances wait too, polling every few milliseconds. Key names are HMACs of
 * (tenant, key): Idempotency-Keys are the tenant's data and never appear in Redis in clear.
 */
import { createHmac } from 'node:crypto';
import { withDeadline } from '../../core/deadline.js';
import type { LockFactory } from '../../infra/lock/index.js';
import type { IdempotencyGuard } from '../ports.js';

/** Between two looks at a key held by another instance. */
const POLL_MS = 10;

export interface IdempotencyGuardOptions {
  /** Locks shared by every instance (Redis); absent: this process is the only one (the embedded default). */
  locks?: LockFactory;
  /** Keys the HMAC of lock names. */
  keySecret: Buffer;
  /** The longest a Redis call may take before the hold goes on in this process alone. */
  redisTimeoutMs: number;
  /** Told when Redis could not be asked: twins on other instances are then settled by the unique key alone. */
  onLockError?: (error: unknown) => void;
}

export class LockingIdempotencyGuard implements IdempotencyGuard {
  /** Keys held in this process → settles when let go. */
  private readonly held = new Map<string, Promise<void>>();

  constructor(private readonly options: IdempotencyGuardOptions) {}

  private nameOf(tenantId: string, key: string): string {
    return `idem:${createHmac('sha256', this.options.keySecret).update(tenantId).update('\0').update(key).digest('base64url')}`;
  }

  async tryHold(tenantId: string, key: string): Promise<(() => Promise<void>) | undefined> {
    const name = this.nameOf(tenantId, key);
    if (this.held.has(name)) return undefined;
    let letGo!: () => void;
    this.held.set(
      name,
      new Promise<void>((resolve) => {
        letGo = resolve;
      }),
    );
    const forget = () => {
      this.held.delete(name);
      letGo();
    };
    const lock = this.options.locks?.createLock(name);
    if (lock) {
      let acquired: boolean;
      try {
        acquired = await withDeadline(lock.tryAcquire(), this.options.redisTimeoutMs, 'idempotency lock timed out');
      } catch (error) {
        // Redis away: held in this process; the unique key settles twins elsewhere, as before the guard.
        this.options.onLockError?.(error);
        acquired = true;
      }
      if (!acquired) {
        forget();
        return undefined;
      }
    }
    return async () => {
      forget();
      await lock?.release().catch((error: unknown) => this.options.onLockError?.(error));
    };
  }

  async waitForRelease(tenantId: string, key: string, ms: number): Promise<void> {
    const local = this.held.get(this.nameOf(tenantId, key));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, local ? ms : Math.min(ms, POLL_MS));
    });
    await Promise.race(local ? [local, timeout] : [timeout]);
    clearTimeout(timer);
  }
}

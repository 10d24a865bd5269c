/**
 * The embedded default (no Redis, DESIGN.md §5): every contender lives in one process, so a shared
 * registry of holders is the lock. There is no lease to lose: a process cannot pause one of its
 * holders without pausing them all, and a process that dies takes every holder with it. A holder
 * loses its lock only when the registry revokes it (shutdown, tests).
 */
import type { LeaseLock, LockFactory } from './lease-lock.js';

/** Who holds which name. Locks exclude each other only within one registry. */
export class InProcessLockRegistry {
  private readonly holders = new Map<string, InProcessLeaseLock>();

  holderOf(name: string): InProcessLeaseLock | undefined {
    return this.holders.get(name);
  }

  /** @internal used by InProcessLeaseLock */
  take(lock: InProcessLeaseLock): boolean {
    const holder = this.holders.get(lock.name);
    if (holder !== undefined && holder !== lock) return false;
    this.holders.set(lock.name, lock);
    return true;
  }

  /** @internal used by InProcessLeaseLock */
  give(lock: InProcessLeaseLock): void {
    if (this.holders.get(lock.name) === lock) this.holders.delete(lock.name);
  }

  /** Takes `name` from its holder, which sees `isHeld() === false` and its `onLost` listeners fire. */
  revoke(name: string): boolean {
    const holder = this.holders.get(name);
    if (holder === undefined) return false;
    this.holders.delete(name);
    holder.notifyLost();
    return true;
  }
}

/** The registry used when none is given: one per process, like the locks it stands in for. */
export const processLockRegistry = new InProcessLockRegistry();

export class InProcessLeaseLock implements LeaseLock {
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly name: string,
    private readonly registry: InProcessLockRegistry = processLockRegistry,
  ) {}

  async tryAcquire(): Promise<boolean> {
    return this.registry.take(this);
  }

  async release(): Promise<void> {
    this.registry.give(this);
  }

  isHeld(): boolean {
    return this.registry.holderOf(this.name) === this;
  }

  onLost(listener: () => void): () => void {
    const own = () => listener();
    this.listeners.add(own);
    return () => {
      this.listeners.delete(own);
    };
  }

  /** @internal called by the registry after it has dropped this holder. */
  notifyLost(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // One failing listener must not keep the others from hearing of the loss.
      }
    }
  }
}

/** In-process locks sharing `registry` (default: the process registry). */
export function createInProcessLockFactory(registry: InProcessLockRegistry = processLockRegistry): LockFactory {
  return { createLock: (name) => new InProcessLeaseLock(name, registry) };
}

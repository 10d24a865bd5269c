/**
 * The lock a dispatcher holds while it dispatches one partition (DESIGN.md §6): at most one holder
 * per name at any time, handed over within the lease when a holder dies or stalls.
 *
 * Semantics every implementation keeps:
 * - A lock is held for a lease and kept by renewal (a watchdog) while its holder runs; a holder
 *   that dies stops renewing and the lease runs out, so nobody waits longer than one lease.
 * - A holder decides whether it may still act with {@link LeaseLock.isHeld}, which is answered
 *   locally (no round trip) and is conservative: it turns `false` as soon as the holder cannot prove
 *   the lease is still its own, e.g. once a lease length has passed on its monotonic clock since
 *   the last successful acquire or renewal, even if no timer fired (a process paused by SIGSTOP, a
 *   long GC pause, a blocked event loop). So "`isHeld()` was true at instant t" implies "no other
 *   holder had the lock at t".
 * - Losing the lock involuntarily (renewal refused because the key expired or has another owner,
 *   or the lease ran out locally) flips `isHeld()` to `false` synchronously and then calls every
 *   {@link LeaseLock.onLost} listener, before any other reaction (such as deleting a key that is
 *   still ours), so a dispatcher stops claiming at once. A lost lock may be acquired again later.
 * - {@link LeaseLock.release} is voluntary and does not fire `onLost`.
 *
 * Implementations: `RedisLeaseLock` (many processes, Redis or Redis Cluster) and
 * `InProcessLeaseLock` (the embedded default: every contender lives in one process).
 */
export interface LeaseLock {
  /** What is locked, e.g. `dispatch:sms:0`. Two locks with the same name exclude each other. */
  readonly name: string;

  /**
   * One attempt to take the lock, never waiting for it. Resolves `true` when this holder has the
   * lock afterwards (also when it already had it), `false` when someone else holds it.
   * Rejects only on failure to ask (e.g. Redis unreachable); the lock is then not held.
   */
  tryAcquire(): Promise<boolean>;

  /**
   * Gives the lock up (only if it is still this holder's: another owner's lock is never touched)
   * and stops renewing. Safe to call when not held. After it resolves `isHeld()` is `false`.
   * Best effort on the remote side: if the delete fails the lease still expires on its own.
   */
  release(): Promise<void>;

  /** Whether this holder may act now. Synchronous, local and conservative (see above). */
  isHeld(): boolean;

  /**
   * Calls `listener` (synchronously, with `isHeld()` already `false`) each time the lock is lost
   * involuntarily. Returns a function that removes the listener. A listener that throws does not
   * stop the others.
   */
  onLost(listener: () => void): () => void;
}

/** Makes locks of one kind; a dispatcher asks it for one lock per partition it may dispatch. */
export interface LockFactory {
  createLock(name: string): LeaseLock;
}

/** Why a lock was lost; given to `onError`-style hooks and logs, not to `onLost` listeners. */
export type LockLossReason = 'renewal-refused' | 'lease-expired' | 'revoked';

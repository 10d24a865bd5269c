import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';
import type { AdmissionContext } from '../context.js';
import type { IdempotencyGuard, MessageWriter, StoredIdempotentMessage } from '../ports.js';

/** How long a twin waits for the attempt holding its key before it answers CONFLICT (retry). */
export const IDEMPOTENCY_WAIT_MS = 10_000;

/**
 * A repeat of an accepted request (same Idempotency-Key, same body) answers the stored message
 * before anything is consumed; the same key with another body is a CONFLICT. Concurrent twins are
 * serialised by the guard: one goes on through the chain while it holds the key, the others wait
 * and then replay its message (or, when it was refused, try themselves). The persist step still
 * settles twins on the unique key should the guard be unavailable (Redis away).
 */
export function idempotencyInterceptor(
  messages: Pick<MessageWriter, 'findByIdempotencyKey'>,
  guard: IdempotencyGuard,
  waitMs = IDEMPOTENCY_WAIT_MS,
): Interceptor {
  const releases = new WeakMap<AdmissionContext, () => Promise<void>>();
  const replay = (context: AdmissionContext, existing: StoredIdempotentMessage) => {
    if (existing.requestHash !== context.requestHash) {
      throw new SluiceError('CONFLICT', 'this Idempotency-Key was used with a different request', { details: { id: existing.id } });
    }
    context.outcome = { id: existing.id, status: existing.status, replayed: true };
  };
  return {
    name: 'idempotency',
    async run(context) {
      const key = context.idempotencyKey;
      const tenantId = context.tenant?.id;
      if (!key || !tenantId) return undefined;
      const deadline = performance.now() + waitMs;
      for (;;) {
        const existing = await messages.findByIdempotencyKey(tenantId, key);
        if (existing) return void replay(context, existing);
        const release = await guard.tryHold(tenantId, key);
        if (release) {
          // The holder before us may have committed between the lookup and the hold.
          let committed: StoredIdempotentMessage | undefined;
          try {
            committed = await messages.findByIdempotencyKey(tenantId, key);
          } catch (error) {
            await release();
            throw error;
          }
          if (committed) {
            await release();
            return void replay(context, committed);
          }
          releases.set(context, release);
          return undefined;
        }
        const left = deadline - performance.now();
        if (left <= 0) {
          throw new SluiceError('CONFLICT', 'a request with this Idempotency-Key is still being processed; retry it shortly', {
            retryAfterMs: 1000,
          });
        }
        await guard.waitForRelease(tenantId, key, left);
      }
    },
    async settle(context) {
      const release = releases.get(context);
      if (!release) return;
      releases.delete(context);
      await release();
    },
  };
}

import { SluiceError } from '../../errors.js';
import type { Interceptor } from '../chain.js';
import type { MessageWriter } from '../ports.js';

/**
 * A repeat of an accepted request (same Idempotency-Key, same body) answers the stored message
 * before anything is consumed; the same key with another body is a CONFLICT. Two concurrent first
 * attempts both pass here; the persist step settles them on the unique key.
 */
export function idempotencyInterceptor(messages: Pick<MessageWriter, 'findByIdempotencyKey'>): Interceptor {
  return {
    name: 'idempotency',
    async run(context) {
      if (!context.idempotencyKey || !context.tenant) return undefined;
      const existing = await messages.findByIdempotencyKey(context.tenant.id, context.idempotencyKey);
      if (!existing) return undefined;
      if (existing.requestHash !== context.requestHash) {
        throw new SluiceError('CONFLICT', 'this Idempotency-Key was used with a different request', { details: { id: existing.id } });
      }
      context.outcome = { id: existing.id, status: existing.status, replayed: true };
      return undefined;
    },
  };
}

import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';
import { IdempotencyKeyTaken, type MessageWriter, type NewMessage } from '../ports.js';

/**
 * The last step: the message becomes a row (`queued`, or `scheduled` with its due time). A storage
 * failure rejects with UNAVAILABLE, and the chain gives back what earlier steps consumed.
 */
export function persistInterceptor(messages: MessageWriter): Interceptor {
  return {
    name: 'persist',
    async run(context) {
      const message = context.message!;
      const tenantId = context.tenant!.id;
      // Spelled out, not `{ ...message, … }`: that spread takes V8's generic copy and leaves rows
      // of changing shapes downstream, on the hottest path.
      const row: NewMessage = {
        channel: message.channel,
        recipient: message.recipient,
        recipientKey: message.recipientKey,
        payload: message.payload,
        priority: message.priority,
        dueAt: message.dueAt,
        scheduled: message.scheduled,
        region: message.region,
        fraud: message.fraud,
        id: context.id,
        tenantId,
        createdAt: context.now,
        idempotencyKey: context.idempotencyKey,
        requestHash: context.requestHash,
      };
      try {
        await messages.insert(row);
      } catch (error) {
        if (error instanceof IdempotencyKeyTaken && context.idempotencyKey) {
          // A concurrent twin won the key: answer as its replay (or CONFLICT), and give back what we took.
          const existing = await messages.findByIdempotencyKey(tenantId, context.idempotencyKey);
          if (existing && existing.requestHash === context.requestHash) {
            context.outcome = { id: existing.id, status: existing.status, replayed: true };
            return undefined;
          }
          throw new SluiceError('CONFLICT', 'this Idempotency-Key was used with a different request');
        }
        throw new SluiceError('UNAVAILABLE', 'the message could not be stored; nothing was accepted', { cause: error });
      }
      context.outcome = { id: row.id, status: message.scheduled ? 'scheduled' : 'queued', replayed: false };
      messages.accepted?.(row, context.outcome);
      return undefined;
    },
  };
}

/** The admission chain's persist port (`MessageWriter`) over the messages repository. */

import { DuplicateIdempotencyKeyError } from '../../storage/errors.js';
import type { MessagesRepository } from '../../storage/repositories/messages.js';
import type { AdmissionOutcome } from '../context.js';
import { IdempotencyKeyTaken, type MessageWriter, type NewMessage } from '../ports.js';

/**
 * The chain's persist port: the message inserted through the messages repository (group-committed),
 * a taken Idempotency-Key reported as {@link IdempotencyKeyTaken}, and each acceptance announced to
 * `onAccepted` (the due feed) after the commit.
 */
export class AnnouncingMessageWriter implements MessageWriter {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly maxAttempts: number,
    private readonly onAccepted?: (message: NewMessage, outcome: AdmissionOutcome) => void,
  ) {}

  async findByIdempotencyKey(tenantId: string, key: string) {
    const found = await this.messages.findByIdempotencyKey(tenantId, key);
    return found ? { id: found.id, status: found.status, requestHash: found.requestHash } : undefined;
  }

  async insert(message: NewMessage): Promise<void> {
    try {
      await this.messages.insert({
        id: message.id,
        tenantId: message.tenantId,
        channel: message.channel,
        recipient: message.recipient,
        payload: message.payload,
        now: message.createdAt,
        dueAt: message.dueAt,
        maxAttempts: this.maxAttempts,
        idempotencyKey: message.idempotencyKey ?? null,
        requestHash: message.requestHash ?? null,
        priority: message.priority,
        costMicros: message.fraud?.costMicros ?? null,
        fraudFlags: message.fraud?.flags ?? null,
        traceparent: message.traceparent ?? null,
        tracestate: message.tracestate ?? null,
      });
    } catch (error) {
      if (error instanceof DuplicateIdempotencyKeyError) throw new IdempotencyKeyTaken(error.message);
      throw error;
    }
  }

  accepted(message: NewMessage, outcome: AdmissionOutcome): void {
    this.onAccepted?.(message, outcome);
  }
}

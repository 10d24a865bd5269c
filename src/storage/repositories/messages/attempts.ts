/** Delivery attempts outside a settle (a settle's `record` is written by the batched writer, atomic with the move). */
import type { Kysely } from 'kysely';
import type { Tables } from '../../schema.js';
import { attemptRow, type DeliveryAttempt, type NewDeliveryAttempt, toAttempt } from './types.js';

export async function recordAttempt(db: Kysely<Tables>, input: NewDeliveryAttempt): Promise<DeliveryAttempt> {
  const row = attemptRow(input, input.messageId);
  await db.insertInto('delivery_attempts').values(row).execute();
  return toAttempt(row);
}

/** A message's attempts by attempt number, then id. */
export async function listAttempts(db: Kysely<Tables>, messageId: string): Promise<DeliveryAttempt[]> {
  const rows = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('message_id', '=', messageId)
    .orderBy('attempt_no')
    .orderBy('id')
    .execute();
  return rows.map(toAttempt);
}

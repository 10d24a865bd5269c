/**
 * Feedback: the tenant reports a message's code used; `confirmed_at` is set once, by a guarded
 * UPDATE, and only on a message handed to a provider ({@link HANDED_STATUSES}): a scheduled
 * message confirmed and then canceled would count a conversion that no send stands behind.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../../schema.js';
import { findMessage } from './reads.js';
import { HANDED_STATUSES, type Message } from './types.js';

/**
 * Marks the tenant's message confirmed at `now` unless it is already, or is not handed to a
 * provider. Resolves the message (with its `confirmedAt` and `status`) and whether this call
 * confirmed it; undefined when it is not the tenant's. Not confirmed and `confirmedAt` null: its
 * status forbids it.
 */
export async function confirmMessage(
  db: Kysely<Tables>,
  tenantId: string,
  id: string,
  now: number,
): Promise<{ message: Message; confirmed: boolean } | undefined> {
  const moved = await db
    .updateTable('messages')
    .set({ confirmed_at: now })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .where('confirmed_at', 'is', null)
    .where('status', 'in', HANDED_STATUSES)
    .executeTakeFirst();
  const message = await findMessage(db, id, tenantId);
  return message && { message, confirmed: moved.numUpdatedRows > 0n };
}

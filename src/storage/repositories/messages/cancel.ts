/** Cancel: `queued|scheduled → canceled`, a guarded UPDATE; a message already sending or finished stays as it is. */
import type { Kysely } from 'kysely';
import type { Tables } from '../../schema.js';
import { type EventOutbox, WEBHOOKS_ONLY, writeSettleEvents } from './events.js';
import { type CancelResult, PENDING_STATUSES } from './types.js';

/** Idempotent: an already canceled message answers `'canceled'`. The move and its event commit together. */
export async function cancelMessage(
  db: Kysely<Tables>,
  tenantId: string,
  id: string,
  now: number,
  outbox: EventOutbox = WEBHOOKS_ONLY,
): Promise<CancelResult> {
  const moved = await db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('messages')
      .set({ status: 'canceled', updated_at: now })
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', PENDING_STATUSES)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    await writeSettleEvents(trx, [{ id, status: 'canceled', at: now }], outbox);
    return true;
  });
  if (moved) return 'canceled';
  const row = await db.selectFrom('messages').select('status').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (row === undefined) return 'not-found';
  return row.status === 'canceled' ? 'canceled' : 'too-late';
}

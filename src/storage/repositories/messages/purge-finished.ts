/**
 * Retention: deleting finished messages with their attempts. `updated_at` is what retention
 * counts from; `due_at` ranges the scan on the `(status, due_at)` index. A message sent or failed
 * is never due after its last change; one canceled long before its due time is kept until that
 * has passed too.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../../schema.js';
import { FINISHED_STATUSES } from './types.js';

/** Deletes up to `limit` finished messages due and last changed before `before`, in one transaction. @returns how many. */
export function purgeFinished(db: Kysely<Tables>, options: { before: number; limit: number }): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const ids = (
      await trx
        .selectFrom('messages')
        .select('id')
        .where('status', 'in', FINISHED_STATUSES)
        .where('due_at', '<', options.before)
        .where('updated_at', '<', options.before)
        .limit(options.limit)
        .execute()
    ).map((row) => row.id);
    if (ids.length === 0) return 0;
    await trx.deleteFrom('delivery_attempts').where('message_id', 'in', ids).execute();
    const deleted = await trx.deleteFrom('messages').where('id', 'in', ids).where('status', 'in', FINISHED_STATUSES).executeTakeFirst();
    return Number(deleted.numDeletedRows);
  });
}

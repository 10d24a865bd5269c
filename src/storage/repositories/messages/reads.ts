/** Reads of single messages and of the open backlog's size. */
import type { Kysely } from 'kysely';
import type { Tables } from '../../schema.js';
import { type Message, OPEN_STATUSES, type StatusCount, toMessage } from './types.js';

/** Message `id`; with `tenantId`, only if it is that tenant's. */
export async function findMessage(db: Kysely<Tables>, id: string, tenantId?: string): Promise<Message | undefined> {
  let query = db.selectFrom('messages').selectAll().where('id', '=', id);
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  const row = await query.executeTakeFirst();
  return row && toMessage(row);
}

/** The tenant's message with this idempotency key (unique per tenant). */
export async function findByIdempotencyKey(db: Kysely<Tables>, tenantId: string, idempotencyKey: string): Promise<Message | undefined> {
  const row = await db
    .selectFrom('messages')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
  return row && toMessage(row);
}

/** Open messages by channel and status, read through the status index: the backlog's cost, not the history's. */
export async function countOpen(db: Kysely<Tables>): Promise<StatusCount[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['channel', 'status', (eb) => eb.fn.countAll<number>().as('count')])
    .where('status', 'in', OPEN_STATUSES)
    .groupBy(['channel', 'status'])
    .execute();
  return rows.map((row) => ({ channel: row.channel, status: row.status, count: Number(row.count) }));
}

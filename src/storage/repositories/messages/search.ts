/** The admin search of a tenant's messages, all or to one recipient, newest first, a page at a time. */
import type { Kysely } from 'kysely';
import type { Channel } from '../../../core/channels.js';
import type { MessageStatus, Tables } from '../../schema.js';
import { type Message, toMessage } from './types.js';

export interface RecipientSearch {
  tenantId: string;
  /** The recipient as stored (the delivery form `normalizeRecipient` answers). */
  recipient: string;
  channel?: Channel;
  status?: MessageStatus;
  /** Only messages with an id below this one (the last id of the previous page). */
  beforeId?: string;
  limit: number;
}

/**
 * Up to `limit` messages of the tenant to `recipient`, by id descending (ids sort by creation
 * time: newest first). One backward range scan of `messages_tenant_recipient` (0008) from the
 * cursor; channel and status are filters on the rows it reads.
 */
export async function searchByRecipient(db: Kysely<Tables>, search: RecipientSearch): Promise<Message[]> {
  let query = db.selectFrom('messages').selectAll().where('tenant_id', '=', search.tenantId).where('recipient', '=', search.recipient);
  if (search.channel !== undefined) query = query.where('channel', '=', search.channel);
  if (search.status !== undefined) query = query.where('status', '=', search.status);
  if (search.beforeId !== undefined) query = query.where('id', '<', search.beforeId);
  const rows = await query.orderBy('id', 'desc').limit(search.limit).execute();
  return rows.map((row) => toMessage(row));
}

export interface RecentSearch {
  tenantId: string;
  /** Only messages with an id below this one (the last id of the previous page). */
  beforeId?: string;
  limit: number;
}

/**
 * Up to `limit` of the tenant's messages, by id descending (newest first): one backward range
 * scan of `messages_tenant_id` (0009) from the cursor, whatever the size of the table.
 */
export async function listRecent(db: Kysely<Tables>, search: RecentSearch): Promise<Message[]> {
  let query = db.selectFrom('messages').selectAll().where('tenant_id', '=', search.tenantId);
  if (search.beforeId !== undefined) query = query.where('id', '<', search.beforeId);
  const rows = await query.orderBy('id', 'desc').limit(search.limit).execute();
  return rows.map((row) => toMessage(row));
}

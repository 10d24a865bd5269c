/**
 * The outbox of the status events bus (0010; broker mode): rows written with each status change
 * (`messages/events.ts`), read by the partition's bus publisher oldest first, deleted once the
 * broker has them. A row's partition is its message's shard, so a message's events are read in
 * the order they happened.
 */
import { sql } from 'kysely';
import type { Database } from '../database.js';
import type { BusEventsTable, EventType } from '../schema.js';

/** One event waiting for the bus. */
export interface BusEvent {
  eventId: string;
  messageId: string;
  tenantId: string;
  type: EventType;
  /** The webhook's body, byte for byte. */
  body: string;
  createdAt: number;
}

const toBusEvent = (row: BusEventsTable): BusEvent => ({
  eventId: row.event_id,
  messageId: row.message_id,
  tenantId: row.tenant_id,
  type: row.type,
  body: row.body,
  createdAt: Number(row.created_at),
});

/** Rows per DELETE: inside every dialect's parameter limit. */
const DELETE_CHUNK = 500;

export class BusEventsRepository {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  /**
   * Up to `limit` events of partition `partition` of `partitions`, oldest first (event ids sort by
   * time): a walk of the primary key, filtered by shard.
   */
  async pending(options: { partition: number; partitions: number; limit: number }): Promise<BusEvent[]> {
    let query = this.db.selectFrom('bus_events').selectAll();
    if (options.partitions > 1) query = query.where(sql<number>`shard % ${options.partitions}`, '=', options.partition);
    const rows = await query.orderBy('event_id').limit(options.limit).execute();
    return rows.map(toBusEvent);
  }

  /** Deletes the published events. @returns how many. */
  async remove(eventIds: readonly string[]): Promise<number> {
    let removed = 0;
    for (let start = 0; start < eventIds.length; start += DELETE_CHUNK) {
      const result = await this.db
        .deleteFrom('bus_events')
        .where('event_id', 'in', eventIds.slice(start, start + DELETE_CHUNK))
        .executeTakeFirst();
      removed += Number(result.numDeletedRows);
    }
    return removed;
  }

  /** Events waiting for the bus, all partitions: the outbox's backlog. */
  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('bus_events')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }
}

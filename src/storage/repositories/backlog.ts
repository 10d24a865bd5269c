/**
 * What waits to be sent, read for operators: one tenant's backlog per channel and lane (the admin
 * API's `GET /v1/admin/tenants/:id/backlog`, the console's tenant page), and the due backlog of
 * every tenant for the `sluice_tenant_backlog` gauge. Reads only; nothing here claims or moves.
 *
 * Cost. Both reads are range scans of what is not finished, never of history:
 * - a tenant's backlog is one GROUP BY over its `queued`, `scheduled` and `sending` rows (the
 *   planner reads them through `messages_status_due` or `messages_tenant`, whichever is smaller),
 *   then, per channel and lane with a due message, one probe of
 *   `messages_channel_status_priority_due` at the oldest due time for that message's id;
 * - every tenant's due backlog is one GROUP BY over the due rows (`messages_status_due`, a range
 *   per pending status): its cost is the due backlog's size, which is why the gauge refreshes it
 *   every 15 s rather than on each scrape.
 * Measured on SQLite (this machine, 2 shared cores), 100,000 messages of 1,000 tenants, 80 % of
 * them due: `ofTenant` 31 ms for a tenant of 10,000 messages, 1.3 ms for one of 100;
 * `dueByTenant` 150 to 185 ms, the same order as the `sluice_messages` count each scrape runs.
 * `now` is the caller's (the injected clock), as in every due query.
 */
import { type Kysely, sql } from 'kysely';
import { CHANNELS, type Channel } from '../../core/channels.js';
import type { Database } from '../database.js';
import type { Tables } from '../schema.js';

/** Delivery lanes, in the order a claim serves them: `priority` 0 and 1. */
export const LANES = ['transactional', 'bulk'] as const;
export type Lane = (typeof LANES)[number];

/** What waits on one channel and lane of a tenant. */
export interface LaneBacklog {
  channel: Channel;
  lane: Lane;
  /** `queued` or `scheduled` with `due_at <= now`: may be sent now. */
  due: number;
  /** `queued` or `scheduled` with `due_at > now`: a send time, a retry's back-off, quiet hours. */
  scheduledLater: number;
  /** `sending`: claimed, in flight. */
  sending: number;
  /** The due message that has waited longest (earliest due time, then id); null when none is due. */
  oldestDue: { id: string; dueAt: number } | null;
}

/** One tenant channel's due backlog, for the gauge. */
export interface TenantChannelDue {
  tenantId: string;
  channel: Channel;
  due: number;
}

const PENDING = ['queued', 'scheduled'] as const;

export class BacklogRepository {
  constructor(private readonly database: Database) {}

  private get db(): Kysely<Tables> {
    return this.database.db;
  }

  /** The tenant's backlog on every channel and lane ({@link CHANNELS} × {@link LANES}, zeros included), as of `now`. */
  async ofTenant(tenantId: string, now: number): Promise<LaneBacklog[]> {
    const pending = sql.join(PENDING.map((status) => sql`${status}`));
    const dueNow = sql`status IN (${pending}) AND due_at <= ${now}`;
    const rows = await this.db
      .selectFrom('messages')
      .select([
        'channel',
        'priority',
        sql<number | string>`SUM(CASE WHEN ${dueNow} THEN 1 ELSE 0 END)`.as('due'),
        sql<number | string>`SUM(CASE WHEN status IN (${pending}) AND due_at > ${now} THEN 1 ELSE 0 END)`.as('later'),
        sql<number | string>`SUM(CASE WHEN status = ${'sending'} THEN 1 ELSE 0 END)`.as('sending'),
        sql<number | string | null>`MIN(CASE WHEN ${dueNow} THEN due_at END)`.as('oldest'),
      ])
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', [...PENDING, 'sending'])
      .groupBy(['channel', 'priority'])
      .execute();
    const found = new Map(rows.map((row) => [`${row.channel}/${laneOf(row.priority)}`, row]));
    const backlog: LaneBacklog[] = [];
    for (const channel of CHANNELS) {
      for (const lane of LANES) {
        const row = found.get(`${channel}/${lane}`);
        const oldest = row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest);
        backlog.push({
          channel,
          lane,
          due: Number(row?.due ?? 0),
          scheduledLater: Number(row?.later ?? 0),
          sending: Number(row?.sending ?? 0),
          oldestDue: oldest === undefined ? null : await this.oldestDue(tenantId, channel, lane, oldest),
        });
      }
    }
    return backlog;
  }

  /**
   * The due backlog (`queued`/`scheduled`, `due_at <= now`) of every tenant channel that has one,
   * largest first. Suspended tenants' held messages count: they are a backlog an operator must see.
   */
  async dueByTenant(now: number): Promise<TenantChannelDue[]> {
    const rows = await this.db
      .selectFrom('messages')
      .select(['tenant_id', 'channel', sql<number | string>`COUNT(*)`.as('due')])
      .where('status', 'in', [...PENDING])
      .where('due_at', '<=', now)
      .groupBy(['tenant_id', 'channel'])
      .execute();
    return rows
      .map((row) => ({ tenantId: row.tenant_id, channel: row.channel, due: Number(row.due) }))
      .sort((a, b) => b.due - a.due || (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0));
  }

  /** The id of the tenant's due message at exactly `dueAt` (the lane's earliest), lowest id first: an index probe per status. */
  private async oldestDue(tenantId: string, channel: Channel, lane: Lane, dueAt: number): Promise<{ id: string; dueAt: number } | null> {
    let id: string | undefined;
    for (const status of PENDING) {
      const row = await this.db
        .selectFrom('messages')
        .select('id')
        .where('channel', '=', channel)
        .where('status', '=', status)
        .where('priority', '=', LANES.indexOf(lane))
        .where('due_at', '=', dueAt)
        // In a CASE, so no planner reads the tenant's every message through `messages_tenant`
        // (SQLite's does, for the ORDER BY id), where a probe of the due index reads one row.
        .where(sql<number>`CASE WHEN tenant_id = ${tenantId} THEN 1 ELSE 0 END`, '=', 1)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (row && (id === undefined || row.id < id)) id = row.id;
    }
    // Sent or canceled between the two reads: the lane's oldest is gone, and the next read tells.
    return id === undefined ? null : { id, dueAt };
  }
}

function laneOf(priority: number | string): Lane {
  return Number(priority) === 1 ? 'bulk' : 'transactional';
}

/**
 * The outbox's reading side: what the event dispatcher claims and settles, what a tenant lists and
 * replays, what retention deletes. The rows are written by the status changes themselves
 * (`messages/events.ts`). Order per message: an event is due only when no earlier step of its
 * message is still pending for the same webhook (delivered and failed ones no longer hold it).
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import type { EventStatus, EventType, Tables, WebhookEventsTable } from '../schema.js';

export interface WebhookEvent {
  webhookId: string;
  eventId: string;
  tenantId: string;
  messageId: string;
  step: number;
  type: EventType;
  /** The JSON body, exactly as it is signed and posted. */
  body: string;
  status: EventStatus;
  attempts: number;
  nextAt: number;
  giveUpAt: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

function toEvent(row: WebhookEventsTable): WebhookEvent {
  return {
    webhookId: row.webhook_id,
    eventId: row.event_id,
    tenantId: row.tenant_id,
    messageId: row.message_id,
    step: Number(row.step),
    type: row.type,
    body: row.body,
    status: row.status,
    attempts: Number(row.attempts),
    nextAt: Number(row.next_at),
    giveUpAt: Number(row.give_up_at),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Moves one pending event to `delivered`: a lookup by the whole primary key (exported for its query-plan test). */
export function markDeliveredQuery(db: Kysely<Tables>, mark: { webhookId: string; eventId: string }, now: number) {
  return db
    .updateTable('webhook_events')
    .set((eb) => ({ status: 'delivered', attempts: eb('attempts', '+', 1), last_error: null, updated_at: now }))
    .where('webhook_id', '=', mark.webhookId)
    .where('event_id', '=', mark.eventId)
    .where('status', '=', 'pending');
}

export class WebhookEventsRepository {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  /**
   * Up to `limit` of the webhook's pending events due at `now`, oldest first, none of them in
   * `exclude` (the posts in flight) and none with an earlier step of its message still pending.
   */
  async due(webhookId: string, options: { now: number; limit: number; exclude?: readonly string[] }): Promise<WebhookEvent[]> {
    if (options.limit <= 0) return [];
    let query = this.db
      .selectFrom('webhook_events as e')
      .selectAll('e')
      .where('e.webhook_id', '=', webhookId)
      .where('e.status', '=', 'pending')
      .where('e.next_at', '<=', options.now)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_events as p')
              .select(sql.lit(1).as('one'))
              .whereRef('p.webhook_id', '=', 'e.webhook_id')
              .whereRef('p.message_id', '=', 'e.message_id')
              .whereRef('p.step', '<', 'e.step')
              .where('p.status', '=', 'pending'),
          ),
        ),
      )
      .orderBy('e.next_at')
      .orderBy('e.event_id')
      .limit(options.limit);
    if (options.exclude && options.exclude.length > 0) query = query.where('e.event_id', 'not in', options.exclude);
    return (await query.execute()).map(toEvent);
  }

  /** The earliest `next_at` of the webhook's pending events, or undefined. */
  async nextDue(webhookId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.min('next_at').as('next'))
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return row?.next == null ? undefined : Number(row.next);
  }

  /** The endpoint answered 2xx. Only a pending event moves (a replay started meanwhile is left alone). */
  async markDelivered(webhookId: string, eventId: string, now: number): Promise<void> {
    await this.db
      .updateTable('webhook_events')
      .set((eb) => ({ status: 'delivered', attempts: eb('attempts', '+', 1), last_error: null, updated_at: now }))
      .where('webhook_id', '=', webhookId)
      .where('event_id', '=', eventId)
      .where('status', '=', 'pending')
      .execute();
  }

  /**
   * Many 2xx answers in one transaction whose commit does not wait for its fsync (SQLite): a mark
   * lost in an OS crash makes its event be posted again, as at-least-once allows, and one fsync
   * per answer was the dispatcher's largest cost.
   */
  async markDeliveredMany(marks: readonly { webhookId: string; eventId: string }[], now: number): Promise<void> {
    if (marks.length === 0) return;
    // One statement per event: with `event_id IN (...)` SQLite's planner (no statistics) walks
    // every pending event of the webhook through the due index; by the whole key it is one lookup.
    await this.database.relaxedTransaction(async (trx) => {
      for (const mark of marks) await markDeliveredQuery(trx, mark, now).execute();
    });
  }

  /** The post failed: tried again at `nextAt`, or given up (`failed`) when `nextAt` is past its give-up time. */
  async markFailedAttempt(
    webhookId: string,
    eventId: string,
    options: { now: number; nextAt: number; error: string },
  ): Promise<EventStatus> {
    const row = await this.db
      .selectFrom('webhook_events')
      .select('give_up_at')
      .where('webhook_id', '=', webhookId)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    const status: EventStatus = row !== undefined && options.nextAt > Number(row.give_up_at) ? 'failed' : 'pending';
    await this.db
      .updateTable('webhook_events')
      .set((eb) => ({
        status,
        attempts: eb('attempts', '+', 1),
        next_at: options.nextAt,
        last_error: options.error.slice(0, 1000),
        updated_at: options.now,
      }))
      .where('webhook_id', '=', webhookId)
      .where('event_id', '=', eventId)
      .where('status', '=', 'pending')
      .execute();
    return status;
  }

  /** The tenant's events of `webhookId` in `status` (default failed), newest first. */
  async list(tenantId: string, webhookId: string, options: { status?: EventStatus; limit: number }): Promise<WebhookEvent[]> {
    const rows = await this.db
      .selectFrom('webhook_events')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('webhook_id', '=', webhookId)
      .where('status', '=', options.status ?? 'failed')
      .orderBy('event_id', 'desc')
      .limit(options.limit)
      .execute();
    return rows.map(toEvent);
  }

  /**
   * Every event of the tenant's message on the given webhooks (the tenant's: the caller lists
   * them), by step then webhook: read through `webhook_events_message` (webhook, message, step).
   */
  async listForMessage(tenantId: string, webhookIds: readonly string[], messageId: string): Promise<WebhookEvent[]> {
    if (webhookIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('webhook_events')
      .selectAll()
      .where('webhook_id', 'in', webhookIds)
      .where('message_id', '=', messageId)
      .where('tenant_id', '=', tenantId)
      .orderBy('step')
      .orderBy('webhook_id')
      .orderBy('event_id')
      .execute();
    return rows.map(toEvent);
  }

  /**
   * Makes the tenant's event pending again, due `now`, with a fresh retry window of `retryMs`.
   * @returns the event, or undefined when the tenant has no such event on that webhook.
   */
  async replay(
    tenantId: string,
    webhookId: string,
    eventId: string,
    options: { now: number; retryMs: number },
  ): Promise<WebhookEvent | undefined> {
    const result = await this.db
      .updateTable('webhook_events')
      .set({ status: 'pending', next_at: options.now, give_up_at: options.now + options.retryMs, updated_at: options.now })
      .where('tenant_id', '=', tenantId)
      .where('webhook_id', '=', webhookId)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return undefined;
    const row = await this.db
      .selectFrom('webhook_events')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    return row && toEvent(row);
  }

  /** Deletes up to `limit` delivered or failed events last changed before `before`. @returns how many. */
  async purgeFinished(options: { before: number; limit: number }): Promise<number> {
    const keys = await this.db
      .selectFrom('webhook_events')
      .select(['webhook_id', 'event_id'])
      .where('status', 'in', ['delivered', 'failed'])
      .where('updated_at', '<', options.before)
      .limit(options.limit)
      .execute();
    let deleted = 0;
    for (const key of keys) {
      const result = await this.db
        .deleteFrom('webhook_events')
        .where('webhook_id', '=', key.webhook_id)
        .where('event_id', '=', key.event_id)
        .where('status', 'in', ['delivered', 'failed'])
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
    return deleted;
  }

  /** Pending events of `webhookIds` (an event dispatcher partition's backlog). */
  async countPending(webhookIds: readonly string[]): Promise<number> {
    if (webhookIds.length === 0) return 0;
    const row = await this.db
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('webhook_id', 'in', webhookIds)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  /** Events by status. */
  async countByStatus(): Promise<{ status: EventStatus; count: number }[]> {
    const rows = await this.db
      .selectFrom('webhook_events')
      .select(['status', (eb) => eb.fn.countAll().as('count')])
      .groupBy('status')
      .execute();
    return rows.map((row) => ({ status: row.status, count: Number(row.count) }));
  }
}

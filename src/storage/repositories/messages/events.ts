/**
 * The outbox's writing side: the event rows of status changes, inserted in the transaction of the
 * changes themselves (the batch of `batched-writer.ts`, a cancel's, a claim's), so an event
 * exists if and only if its change committed. One row per subscribed webhook; none when the
 * tenant subscribed to nothing, so a deployment without webhooks pays one indexed read per batch.
 * With the broker on ({@link EventOutbox}), every change also gets one `bus_events` row, the
 * same event id and body, for the status events stream.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Channel } from '../../../core/channels.js';
import { maskRecipient } from '../../../providers/mask.js';
import { newId, shardOf } from '../../ids.js';
import type { BusEventsTable, EventType, MessageStatus, Tables, WebhookEventsTable } from '../../schema.js';

/** Which outboxes a status change writes to: tenants' webhooks always, the bus while the broker is on. */
export interface EventOutbox {
  /** Every change also gets a `bus_events` row (the broker's status events stream). */
  readonly bus: boolean;
}

/** Webhooks only: no broker. */
export const WEBHOOKS_ONLY: EventOutbox = { bus: false };

/** One status change of a message, as its event tells it. */
export interface StatusChange {
  type: EventType;
  messageId: string;
  tenantId: string;
  channel: Channel;
  /** Clear; masked in the event (as in logs). */
  recipient: string;
  /** The status the message moved to. */
  status: MessageStatus;
  /** When it changed (epoch ms): the event's `createdAt`. */
  at: number;
  attempt?: number;
  providerId?: string | null;
  providerMessageId?: string | null;
  error?: string | null;
  /** The vendor's delivery receipt (`message.delivered`, `message.undelivered`). */
  receipt?: { status: string; code: string; at: number } | null;
}

/** The order of an event type within its message: a later step is posted after the earlier ones. */
const STEP: Readonly<Record<EventType, number>> = {
  'message.accepted': 0,
  'message.sent': 1,
  'message.failed': 1,
  'message.canceled': 1,
  'message.suppressed': 1,
  'message.delivered': 2,
  'message.undelivered': 2,
};

/** How long a failing event is retried before it is `failed`. */
export const DEFAULT_RETRY_MS = 24 * 3_600_000;

/** Rows per INSERT: 13 columns each, well inside every dialect's parameter limit. */
const INSERT_CHUNK = 200;

/** The event type of a move to `status`, or undefined when that move is not an event (a retry, a release). */
export function eventTypeOf(status: MessageStatus): EventType | undefined {
  if (status === 'sent') return 'message.sent';
  if (status === 'failed') return 'message.failed';
  if (status === 'canceled') return 'message.canceled';
  if (status === 'suppressed') return 'message.suppressed';
  if (status === 'delivered') return 'message.delivered';
  if (status === 'undelivered') return 'message.undelivered';
  return undefined;
}

/** The JSON body posted for `change` under event id `id` (signed exactly as stored). */
export function eventBody(id: string, change: StatusChange): string {
  const data: Record<string, unknown> = {
    messageId: change.messageId,
    channel: change.channel,
    recipient: maskRecipient(change.recipient),
    status: change.status,
  };
  if (change.attempt !== undefined && change.attempt > 0) data.attempt = change.attempt;
  if (change.providerId) data.provider = change.providerId;
  if (change.providerMessageId) data.providerMessageId = change.providerMessageId;
  if (change.error) data.error = change.error;
  if (change.receipt) data.receipt = { ...change.receipt, at: new Date(change.receipt.at).toISOString() };
  return JSON.stringify({ id, type: change.type, createdAt: new Date(change.at).toISOString(), data });
}

type WebhookRow = { id: string; tenant_id: string; events: string };

/**
 * The query text of {@link enabledWebhooks} per database (its dialect's adapter: placeholders
 * differ) and count of tenants: every group commit asks it, and building it again each time was a
 * third of what the outbox cost the accept path.
 */
const webhooksQueries = new WeakMap<object, Map<number, string>>();

/** The enabled webhooks of `tenants`, in `trx`. */
async function enabledWebhooks(trx: Kysely<Tables>, tenants: readonly string[]): Promise<WebhookRow[]> {
  // Bound parameters in query order: the tenant ids, then `enabled`'s 1.
  const parameters = [...tenants, 1];
  const adapter = trx.getExecutor().adapter;
  let texts = webhooksQueries.get(adapter);
  if (!texts) {
    texts = new Map();
    webhooksQueries.set(adapter, texts);
  }
  const text = texts.get(tenants.length);
  if (text !== undefined) return (await trx.executeQuery<WebhookRow>(CompiledQuery.raw(text, parameters))).rows;
  const compiled = trx
    .selectFrom('webhooks')
    .select(['id', 'tenant_id', 'events'])
    .where('tenant_id', 'in', tenants)
    .where('enabled', '=', 1)
    .compile();
  const sameOrder =
    compiled.parameters.length === parameters.length && compiled.parameters.every((value, index) => value === parameters[index]);
  if (sameOrder && texts.size < 64) texts.set(tenants.length, compiled.sql);
  return (await trx.executeQuery(compiled)).rows;
}

/**
 * Inserts the event rows of `changes` for every enabled webhook of their tenants subscribed to
 * their type, and with `outbox.bus` one bus row per change, in `trx`. @returns how many webhook
 * rows were written.
 */
export async function writeEvents(trx: Kysely<Tables>, changes: readonly StatusChange[], outbox = WEBHOOKS_ONLY): Promise<number> {
  if (changes.length === 0) return 0;
  const tenants = [...new Set(changes.map((change) => change.tenantId))];
  const webhooks = await enabledWebhooks(trx, tenants);
  if (webhooks.length === 0 && !outbox.bus) return 0;
  const byTenant = new Map<string, { id: string; events: Set<string> }[]>();
  for (const webhook of webhooks) {
    const list = byTenant.get(webhook.tenant_id) ?? [];
    list.push({ id: webhook.id, events: new Set(JSON.parse(webhook.events) as string[]) });
    byTenant.set(webhook.tenant_id, list);
  }
  const rows: WebhookEventsTable[] = [];
  const busRows: BusEventsTable[] = [];
  for (const change of changes) {
    const subscribed = (byTenant.get(change.tenantId) ?? []).filter((webhook) => webhook.events.has(change.type));
    if (subscribed.length === 0 && !outbox.bus) continue;
    const eventId = `evt_${newId(change.at)}`;
    const body = eventBody(eventId, change);
    if (outbox.bus)
      busRows.push({
        event_id: eventId,
        message_id: change.messageId,
        tenant_id: change.tenantId,
        shard: shardOf(change.messageId),
        type: change.type,
        body,
        created_at: change.at,
      });
    for (const webhook of subscribed)
      rows.push({
        webhook_id: webhook.id,
        event_id: eventId,
        tenant_id: change.tenantId,
        message_id: change.messageId,
        step: STEP[change.type],
        type: change.type,
        body,
        status: 'pending',
        attempts: 0,
        next_at: change.at,
        give_up_at: change.at + DEFAULT_RETRY_MS,
        last_error: null,
        created_at: change.at,
        updated_at: change.at,
      });
  }
  for (let start = 0; start < rows.length; start += INSERT_CHUNK)
    await trx
      .insertInto('webhook_events')
      .values(rows.slice(start, start + INSERT_CHUNK))
      .execute();
  for (let start = 0; start < busRows.length; start += INSERT_CHUNK)
    await trx
      .insertInto('bus_events')
      .values(busRows.slice(start, start + INSERT_CHUNK))
      .execute();
  return rows.length;
}

/**
 * The events of settles that moved a message to a final status (`ids`), read back in `trx` for
 * their tenant, channel and recipient (a settle carries only the id and the new values).
 */
export async function writeSettleEvents(
  trx: Kysely<Tables>,
  moved: readonly { id: string; status: MessageStatus; at: number }[],
  outbox = WEBHOOKS_ONLY,
): Promise<void> {
  const final = moved.filter((move) => eventTypeOf(move.status) !== undefined);
  if (final.length === 0) return;
  const rows = await trx
    .selectFrom('messages')
    .select([
      'id',
      'tenant_id',
      'channel',
      'recipient',
      'status',
      'attempts',
      'provider_id',
      'provider_message_id',
      'last_error',
      'receipt_status',
      'receipt_code',
      'receipt_at',
    ])
    .where(
      'id',
      'in',
      final.map((move) => move.id),
    )
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const changes: StatusChange[] = [];
  for (const move of final) {
    const row = byId.get(move.id);
    const type = eventTypeOf(move.status);
    if (row === undefined || type === undefined) continue;
    changes.push({
      type,
      messageId: row.id,
      tenantId: row.tenant_id,
      channel: row.channel,
      recipient: row.recipient,
      status: move.status,
      at: move.at,
      attempt: Number(row.attempts),
      providerId: row.provider_id,
      providerMessageId: row.provider_message_id,
      ...(move.status === 'failed' || move.status === 'suppressed' ? { error: row.last_error } : {}),
      ...(row.receipt_status !== null && (move.status === 'delivered' || move.status === 'undelivered')
        ? { receipt: { status: row.receipt_status, code: row.receipt_code ?? '', at: Number(row.receipt_at) } }
        : {}),
    });
  }
  await writeEvents(trx, changes, outbox);
}

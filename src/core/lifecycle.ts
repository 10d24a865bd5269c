/**
 * The lifecycle vocabulary: the states of a tenant, a message and a webhook event, and the event
 * types a webhook subscribes to. One list each, owned here; the SQL schema, the API's wire enums,
 * the CLI and the console all derive from them.
 */

/** Lifecycle of a tenant: a suspended tenant's sends are rejected (`TENANT_SUSPENDED`). */
export const TENANT_STATUSES = ['active', 'suspended'] as const;
export type TenantStatus = (typeof TENANT_STATUSES)[number];

/**
 * Lifecycle of a message (DESIGN.md §6):
 * `queued|scheduled → sending → sent | failed`, `sending → scheduled` (retry), `queued|scheduled → canceled`,
 * and `sent → delivered | undelivered` on the vendor's delivery receipt (SMS only: other channels stop at `sent`).
 * Every move is a guarded UPDATE; nothing moves backwards.
 */
export const MESSAGE_STATUSES = ['queued', 'scheduled', 'sending', 'sent', 'failed', 'canceled', 'delivered', 'undelivered'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Subscribable message events (docs/api.md, "Status callbacks"); the type of a `webhook_events` row. */
export const EVENT_TYPES = [
  'message.accepted',
  'message.sent',
  'message.failed',
  'message.canceled',
  'message.delivered',
  'message.undelivered',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An event row's state: `pending` until its endpoint answered 2xx (`delivered`) or it was given up (`failed`). */
export const EVENT_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

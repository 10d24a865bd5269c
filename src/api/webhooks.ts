/** A tenant's webhook endpoints and their events (admin token). */
import { type Static, Type } from '@sinclair/typebox';
import type {
  WebhookEventView as WebhookEventViewType,
  WebhookView as WebhookViewType,
  WebhookWithSecret as WebhookWithSecretType,
} from '../services/views.js';
import { EventStatusName, EventTypeName, Iso, Nullable, viewOf } from './common.js';

const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'http(s); no credentials; public hosts unless SLUICE_WEBHOOK_ALLOW_PRIVATE',
});
const WebhookEvents = Type.Array(EventTypeName, { minItems: 1, maxItems: 16, uniqueItems: true });
const WebhookDescription = Type.Union([Type.String({ maxLength: 512 }), Type.Null()]);

export const NewWebhookBody = Type.Object(
  {
    url: WebhookUrl,
    events: Type.Optional(WebhookEvents),
    description: Type.Optional(WebhookDescription),
  },
  { additionalProperties: false },
);
export const WebhookPatchBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(WebhookEvents),
    description: Type.Optional(WebhookDescription),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export const WebhookParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  webhookId: Type.String({ minLength: 1, maxLength: 64 }),
});
export const WebhookEventParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  webhookId: Type.String({ minLength: 1, maxLength: 64 }),
  eventId: Type.String({ minLength: 1, maxLength: 64 }),
});
export const WebhookEventQuery = Type.Object(
  {
    status: Type.Optional(EventStatusName),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'Events to list, 1 to 1000; default 100' })),
  },
  { additionalProperties: false },
);

/** A tenant's webhook endpoint; its secret is shown only when made (create, rotate-secret). */
export const WebhookView = viewOf<WebhookViewType>()(
  Type.Object({
    id: Type.String(),
    tenantId: Type.String(),
    url: Type.String({ description: 'As stored, with secret-like query parameters masked' }),
    events: Type.Array(EventTypeName),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    previousSecretUntil: Nullable(
      Type.String({ format: 'date-time', description: 'Until when the secret before the last rotation still signs' }),
    ),
    createdAt: Iso,
    updatedAt: Iso,
  }),
);
export type WebhookView = Static<typeof WebhookView>;

/** A webhook with its signing secret, in clear this once. */
export const WebhookWithSecret = viewOf<WebhookWithSecretType>()(
  Type.Composite([WebhookView, Type.Object({ secret: Type.String({ description: 'Shown once; sealed at rest' }) })]),
);
export type WebhookWithSecret = Static<typeof WebhookWithSecret>;

/** One event of a webhook, as its tenant lists it. */
export const WebhookEventView = viewOf<WebhookEventViewType>()(
  Type.Object({
    id: Type.String({ description: "The event id: the body's id and the posts' webhook-id (and Sluice-Event-Id)" }),
    webhookId: Type.String(),
    messageId: Type.String(),
    type: EventTypeName,
    status: EventStatusName,
    attempts: Type.Integer(),
    nextAt: Iso,
    lastError: Nullable(Type.String()),
    createdAt: Iso,
    body: Type.String({ description: 'The JSON body posted, exactly as signed' }),
  }),
);
export type WebhookEventView = Static<typeof WebhookEventView>;

export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookView) });
export const WebhookEventList = Type.Object({ events: Type.Array(WebhookEventView) });
export const WebhookDeleted = Type.Object({ deleted: Type.Literal(true) });

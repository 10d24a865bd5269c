/** Sending, reading and cancelling a message (tenant API key): the request, its answers, the message view. */
import { type Static, Type } from '@sinclair/typebox';
import { PRIORITIES } from '../admission/context.js';
import { PARAM_VALUE_LIMIT } from '../admission/template-patterns.js';
import { CONTENT_LIMITS } from '../admission/templates.js';
import { CHANNELS } from '../core/channels.js';
import type { FeedbackView as FeedbackViewType, MessageView as MessageViewType } from '../services/views.js';
import { ChannelName, Iso, KEY, MessageStatusName, Nullable, stringEnum, viewOf } from './common.js';

const Params = Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String({ maxLength: PARAM_VALUE_LIMIT }), Type.Number()]), {
  maxProperties: 50,
  ...KEY,
});

export const SendBody = Type.Object(
  {
    channel: stringEnum(CHANNELS, { description: 'sms, email or webhook' }),
    to: Type.String({ minLength: 1, maxLength: 320, description: 'Phone (E.164 or national), email address, or webhook target' }),
    template: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'A template stored for the tenant and channel (404 NOT_FOUND when none has this name), rendered with `params`',
      }),
    ),
    vendorTemplate: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          "SMS: the vendor's approved template code (Aliyun TemplateCode, Tencent TemplateId), sent with `params` as given; instead of `template` and `body`",
      }),
    ),
    params: Type.Optional(Params),
    subject: Type.Optional(Type.String({ maxLength: CONTENT_LIMITS.subject })),
    body: Type.Optional(Type.String({ maxLength: CONTENT_LIMITS.body })),
    html: Type.Optional(Type.String({ maxLength: CONTENT_LIMITS.html })),
    sendAt: Type.Optional(
      Type.Union([Type.String({ format: 'date-time', maxLength: 40 }), Type.Integer({ minimum: 0 })], {
        description:
          "When to send: an ISO 8601 date-time with its offset, or epoch milliseconds (not seconds). The recipient's sliding-log rules count the message at this time",
      }),
    ),
    priority: Type.Optional(
      stringEnum(PRIORITIES, { description: 'transactional (the default) is claimed before bulk under a saturated pace' }),
    ),
    category: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9._:-]{1,64}$',
        description:
          "Your name for the kind of send (`marketing`…): the recipient's suppressions of this category apply, besides those of every category",
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ channel: 'sms', to: '+8613800138000', body: 'Your code is 1234' }],
  },
);

/**
 * A send's headers: the Idempotency-Key's rule, in the schema so /docs shows it (the route answers
 * a header that breaks it with its own message and `field`).
 */
export const SendHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'Replays of one key answer the first request (200) instead of sending again; 1 to 128 visible ASCII characters',
    }),
  ),
});

export const Accepted = Type.Object({
  id: Type.String(),
  status: Type.String(),
  dueAt: Type.Optional(Type.String({ description: 'When a scheduled message is due' })),
  deferredBy: Type.Optional(Type.String({ description: '`quiet-hours` when the tenant channel’s quiet hours moved the message' })),
});

/** A replay: the message first accepted with this Idempotency-Key (200). */
export const Replayed = Type.Object(Accepted.properties, { description: 'A replay: the message first accepted with this Idempotency-Key' });
/** A new message (202). */
export const AcceptedNew = Type.Object(Accepted.properties, { description: 'Accepted: queued, or scheduled for sendAt' });

export const Canceled = Type.Object({ id: Type.String(), status: Type.Literal('canceled') });

/** A message as its tenant reads it, with its delivery attempts. */
export const MessageView = viewOf<MessageViewType>()(
  Type.Object({
    id: Type.String(),
    channel: ChannelName,
    to: Type.String({ description: 'The recipient as delivered to (normalised: E.164, the email domain lower-cased…)' }),
    status: MessageStatusName,
    dueAt: Iso,
    attempts: Type.Integer(),
    lastError: Nullable(Type.String()),
    providerMessageId: Nullable(Type.String()),
    createdAt: Iso,
    sentAt: Nullable(Iso),
    priority: Type.Optional(stringEnum(['transactional', 'bulk'] as const)),
    template: Type.Optional(
      Type.Object(
        { name: Type.String(), version: Type.Integer() },
        { description: 'The stored template and the version it was rendered with' },
      ),
    ),
    receipt: Nullable(
      Type.Object(
        {
          status: stringEnum(['delivered', 'undelivered'] as const),
          code: Type.String({ description: "The vendor's own code (DELIVERED, DELIVRD, UNDELIV, MK:0001…)" }),
          at: Iso,
        },
        { description: "The vendor's delivery receipt (SMS providers that push them); null until one arrived" },
      ),
    ),
    confirmedAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the tenant reported the code used (feedback); absent until then' }),
    ),
    deliveryAttempts: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        provider: Nullable(Type.String()),
        startedAt: Iso,
        finishedAt: Iso,
        outcome: Type.String(),
        error: Nullable(Type.String()),
      }),
    ),
  }),
);
export type MessageView = Static<typeof MessageView>;

/** `POST /v1/messages/:id/feedback`: the tenant saw the message's code used (as Twilio's Message Feedback). */
export const FeedbackBody = Type.Object(
  { outcome: stringEnum(['confirmed'] as const, { description: 'confirmed: the code was used' }) },
  { additionalProperties: false, examples: [{ outcome: 'confirmed' }] },
);

export const FeedbackView = viewOf<FeedbackViewType>()(
  Type.Object({
    id: Type.String(),
    outcome: stringEnum(['confirmed'] as const),
    confirmedAt: Type.String({ format: 'date-time', description: "The first report's time: a repeat changes nothing" }),
  }),
);

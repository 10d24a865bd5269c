/**
 * The admin lookups (admin token): a tenant's messages and one message's timeline, a recipient's
 * ban and counts (a peek), and the rules dry run. Each reads only.
 */

import { type Static, Type } from '@sinclair/typebox';
import { MAX_RECIPIENT_LENGTH } from '../core/recipients.js';
import { SEARCH_LIMITS } from '../services/admin-lookup-service.js';
import type {
  AdminMessageView as AdminMessageViewType,
  BanStatusView as BanStatusViewType,
  MessageSearchPage as MessageSearchPageType,
  RulesPreviewView as RulesPreviewViewType,
} from '../services/lookup-views.js';
import { MAX_PREVIEW_SENDS } from '../services/rules-preview.js';
import { ChannelName, Iso, MessageStatusName, viewOf } from './common.js';
import { MessageFraudView } from './fraud.js';
import { MessageView } from './messages.js';
import { RuleBody, RuleView } from './rules.js';
import { WebhookEventView } from './webhooks.js';

/** Query strings are not coerced: `limit` is digits here, its range the service's. */
export const MessageSearchQuery = Type.Object(
  {
    to: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_RECIPIENT_LENGTH,
        description:
          'The recipient, in any spelling a send accepts: normalised as admission normalises it, then matched exactly. Absent: every message of the tenant (`channel` and `status` then are refused)',
      }),
    ),
    channel: Type.Optional(ChannelName),
    status: Type.Optional(MessageStatusName),
    limit: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,9}$',
        description: `Messages per page, 1 to ${SEARCH_LIMITS.max}; default ${SEARCH_LIMITS.default}`,
      }),
    ),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "A previous page's `nextCursor`" })),
  },
  { additionalProperties: false },
);

/** A search as a caller writes it: the query's fields, `limit` a number (1 to 200, default 50). */
export type MessageSearch = Omit<Static<typeof MessageSearchQuery>, 'limit'> & { limit?: number };

export const MessageParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  messageId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** 400 days, the longest window or ban: an offset beyond it meets nothing earlier. */
const MAX_OFFSET_MS = 400 * 86_400_000;

export const RulesPreviewBody = Type.Object(
  {
    rules: Type.Optional(
      Type.Array(RuleBody, {
        maxItems: 16,
        description: "The rules to try, as PUT .../rules/:channel takes them; absent: the channel's stored rules",
      }),
    ),
    sends: Type.Array(
      Type.Object(
        { atMs: Type.Integer({ minimum: 0, maximum: MAX_OFFSET_MS, description: 'Milliseconds after the first send' }) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_PREVIEW_SENDS, description: 'Sends to one recipient, in order (offsets not decreasing)' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }],
        sends: [{ atMs: 0 }, { atMs: 1 }, { atMs: 2 }, { atMs: 3 }, { atMs: 60_000 }],
      },
    ],
  },
);

/** A message as the admin search lists it: its view without the attempts (the detail has them). */
export const MessageSummaryView = Type.Omit(MessageView, ['deliveryAttempts']);
export type MessageSummaryView = Static<typeof MessageSummaryView>;

/** One page of the search, newest first; `nextCursor` is absent on the last page. */
export const MessageSearchPage = viewOf<MessageSearchPageType>()(
  Type.Object({
    messages: Type.Array(MessageSummaryView),
    nextCursor: Type.Optional(Type.String({ description: 'Pass as `cursor` for the next (older) page; absent: the last page' })),
  }),
);
export type MessageSearchPage = Static<typeof MessageSearchPage>;

/**
 * A message as an operator reads it: the tenant's view (`deliveryAttempts`: when, provider,
 * outcome, error; `receipt`), its tenant, and the status callbacks written for it.
 */
export const AdminMessageView = viewOf<AdminMessageViewType>()(
  Type.Composite([
    MessageView,
    Type.Object({
      tenantId: Type.String(),
      events: Type.Array(WebhookEventView, {
        description: "Status callbacks of the message to the tenant's webhooks (pending, delivered or failed), by step",
      }),
      fraud: Type.Optional(MessageFraudView),
      traceId: Type.Optional(
        Type.String({ description: 'The message\'s OpenTelemetry trace id (docs/operations.md, "Tracing"); absent when untraced' }),
      ),
    }),
  ]),
);
export type AdminMessageView = Static<typeof AdminMessageView>;

/** One rule of a recipient's channel and what it counts now. */
export const RuleCountView = Type.Composite([
  RuleView,
  Type.Object({ count: Type.Integer({ description: 'Admitted sends the rule counts now (token-bucket: tokens in use)' }) }),
]);

/** A recipient's ban and counts on a channel, looked at without consuming or recording anything. */
export const BanStatusView = viewOf<BanStatusViewType>()(
  Type.Object(
    {
      channel: Type.String(),
      recipient: Type.String({ description: 'The canonical key the rules count under (docs/api.md, Recipients)' }),
      banned: Type.Boolean(),
      bannedUntil: Type.Union([Iso, Type.Null()]),
      allowed: Type.Boolean({ description: 'Whether a send now would pass the rules' }),
      retryAfterMs: Type.Integer({ description: 'Until a send could pass; 0 when allowed' }),
      rules: Type.Array(RuleCountView, {
        description: "The channel's rules in order, each with its count; empty: no rules, nothing counted",
      }),
      at: Iso,
    },
    {
      examples: [
        {
          channel: 'sms',
          recipient: '+8613800138000',
          banned: true,
          bannedUntil: '2026-12-01T10:10:00.003Z',
          allowed: false,
          retryAfterMs: 540_003,
          rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600, count: 3 }],
          at: '2026-12-01T10:01:00.000Z',
        },
      ],
    },
  ),
);
export type BanStatusView = Static<typeof BanStatusView>;

/** One replayed send of a dry run. */
export const PreviewResultView = Type.Object({
  atMs: Type.Integer(),
  allowed: Type.Boolean(),
  code: Type.Optional(Type.Union([Type.Literal('RATE_LIMITED'), Type.Literal('BANNED')])),
  retryAfterMs: Type.Optional(Type.Integer()),
  rule: Type.Optional(Type.Integer({ description: 'RATE_LIMITED: the index of the first rule hit' })),
  counts: Type.Array(Type.Integer(), { description: 'Per rule, what it counted before this send; empty when a ban decided' }),
});

/** A rules dry run's answer. */
export const RulesPreviewView = viewOf<RulesPreviewViewType>()(
  Type.Object(
    {
      rules: Type.Array(RuleView, { description: "The rules replayed: the body's, or the channel's stored ones" }),
      results: Type.Array(PreviewResultView),
    },
    {
      examples: [
        {
          rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }],
          results: [
            { atMs: 0, allowed: true, counts: [0] },
            { atMs: 1, allowed: true, counts: [1] },
            { atMs: 2, allowed: true, counts: [2] },
            { atMs: 3, allowed: false, code: 'RATE_LIMITED', retryAfterMs: 600_000, rule: 0, counts: [3] },
            { atMs: 60_000, allowed: false, code: 'BANNED', retryAfterMs: 540_003, counts: [] },
          ],
        },
      ],
    },
  ),
);
export type RulesPreviewView = Static<typeof RulesPreviewView>;

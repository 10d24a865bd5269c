/**
 * What the admin lookups answer (the console's message search and timeline, the ban peek, the
 * rules dry run), as TypeBox schemas: the HTTP API serialises with them, the services and the
 * client use their `Static` types.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { Channel } from '../core/channels.js';
import type { MessageStatus } from '../storage/schema.js';
import { MessageView, RuleView, WebhookEventView } from './views.js';

const Iso = Type.String({ format: 'date-time' });

/** A message as the admin search lists it: its view without the attempts (the detail has them). */
export const MessageSummaryView = Type.Omit(MessageView, ['deliveryAttempts']);
export type MessageSummaryView = Static<typeof MessageSummaryView>;

/** A page of a tenant's messages: every message, or those to `to` (narrowed by `channel` and `status`). */
export interface MessageSearch {
  /** Absent: the tenant's messages, newest first (`channel` and `status` then are refused). */
  to?: string;
  /** Absent: every channel that reads `to`. */
  channel?: Channel;
  status?: MessageStatus;
  /** 1 to 200, default 50. */
  limit?: number;
  /** A previous page's `nextCursor`. */
  cursor?: string;
}

/** One page of the search, newest first; `nextCursor` is absent on the last page. */
export const MessageSearchPage = Type.Object({
  messages: Type.Array(MessageSummaryView),
  nextCursor: Type.Optional(Type.String({ description: 'Pass as `cursor` for the next (older) page; absent: the last page' })),
});
export type MessageSearchPage = Static<typeof MessageSearchPage>;

/**
 * A message as an operator reads it: the tenant's view (`deliveryAttempts`: when, provider,
 * outcome, error; `receipt`), its tenant, and the status callbacks written for it.
 */
export const AdminMessageView = Type.Composite([
  MessageView,
  Type.Object({
    tenantId: Type.String(),
    events: Type.Array(WebhookEventView, {
      description: "Status callbacks of the message to the tenant's webhooks (pending, delivered or failed), by step",
    }),
  }),
]);
export type AdminMessageView = Static<typeof AdminMessageView>;

/** One rule of a recipient's channel and what it counts now. */
export const RuleCountView = Type.Composite([
  RuleView,
  Type.Object({ count: Type.Integer({ description: 'Admitted sends the rule counts now (token-bucket: tokens in use)' }) }),
]);

/** A recipient's ban and counts on a channel, looked at without consuming or recording anything. */
export const BanStatusView = Type.Object(
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
export type PreviewResultView = Static<typeof PreviewResultView>;

export const RulesPreviewView = Type.Object(
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
);
export type RulesPreviewView = Static<typeof RulesPreviewView>;

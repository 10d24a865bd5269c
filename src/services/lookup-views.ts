/**
 * What the admin lookups take and answer (the console's message search and timeline, the ban peek,
 * the rules dry run), as plain types; `api/lookups.ts` holds the wire's schemas to them.
 */
import type { Channel } from '../core/channels.js';
import type { MessageStatus } from '../core/lifecycle.js';
import type { MessageFraudView, MessageView, RuleView, WebhookEventView } from './views.js';

/** A message as the admin search lists it: its view without the attempts (the detail has them). */
export type MessageSummaryView = Omit<MessageView, 'deliveryAttempts'>;

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
export interface MessageSearchPage {
  messages: MessageSummaryView[];
  nextCursor?: string;
}

/** A message as an operator reads it: the tenant's view, its tenant, and the status callbacks written for it. */
export interface AdminMessageView extends MessageView {
  tenantId: string;
  events: WebhookEventView[];
  /** SMS pumping protection's part: the charged cost and monitor mode's lines; absent when it left nothing. */
  fraud?: MessageFraudView;
}

/** One rule of a recipient's channel and what it counts now. */
export interface RuleCountView extends RuleView {
  /** Admitted sends the rule counts now (token-bucket: tokens in use). */
  count: number;
}

/** A recipient's ban and counts on a channel, looked at without consuming or recording anything. */
export interface BanStatusView {
  channel: string;
  /** The canonical key the rules count under. */
  recipient: string;
  banned: boolean;
  bannedUntil: string | null;
  /** Whether a send now would pass the rules. */
  allowed: boolean;
  /** Until a send could pass; 0 when allowed. */
  retryAfterMs: number;
  /** The channel's rules in order, each with its count; empty: no rules, nothing counted. */
  rules: RuleCountView[];
  at: string;
}

/** One replayed send of a dry run. */
export interface PreviewResultView {
  atMs: number;
  allowed: boolean;
  code?: 'RATE_LIMITED' | 'BANNED';
  retryAfterMs?: number;
  /** RATE_LIMITED: the index of the first rule hit. */
  rule?: number;
  /** Per rule, what it counted before this send; empty when a ban decided. */
  counts: number[];
}

/** A rules dry run's answer: the rules replayed (the body's, or the channel's stored ones) and each send's decision. */
export interface RulesPreviewView {
  rules: RuleView[];
  results: PreviewResultView[];
}

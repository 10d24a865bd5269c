/**
 * What the services answer: the read models of messages, tenants, rules, blacklists, providers,
 * risk rule sets and webhooks, as plain types. The wire's schemas of the same shapes are in `api/`,
 * each held to its type here by the compiler (`viewOf` in `api/common.ts`): the services cannot
 * import `api/` (the layer above), so the shape is declared here and checked there.
 */
import type { FraudFlag, FraudMode, FraudOutcome, FraudPolicy, FraudRule, SmsPrices } from '../admission/fraud-policy.js';
import type { QuietHours } from '../admission/quiet-hours.js';
import type { TemplateSpec } from '../admission/templates.js';
import type { Channel } from '../core/channels.js';
import type { EventStatus, EventType, MessageStatus, TenantStatus } from '../core/lifecycle.js';
import type { Algorithm, FallbackMode, RiskEffect, RiskMode, RiskRuleKind } from '../limiter/index.js';
import type { ProviderKind } from '../providers/kinds.js';

/** One attempt to hand a message to a provider. Times are ISO 8601, as in every view. */
export interface DeliveryAttemptView {
  attempt: number;
  provider: string | null;
  startedAt: string;
  finishedAt: string;
  outcome: string;
  error: string | null;
}

/** A message as its tenant reads it, with its delivery attempts. */
export interface MessageView {
  id: string;
  channel: Channel;
  /** The recipient as delivered to (normalised). */
  to: string;
  status: MessageStatus;
  dueAt: string;
  attempts: number;
  lastError: string | null;
  providerMessageId: string | null;
  createdAt: string;
  sentAt: string | null;
  priority?: 'transactional' | 'bulk';
  /** The stored template and the version it was rendered with. */
  template?: { name: string; version: number };
  /** The vendor's delivery receipt; null until one arrived. */
  receipt: { status: 'delivered' | 'undelivered'; code: string; at: string } | null;
  /** When the tenant reported the code used (`POST /v1/messages/:id/feedback`); absent until then. */
  confirmedAt?: string;
  deliveryAttempts: DeliveryAttemptView[];
}

/** A tenant as the admin API and the CLI show it: its daily quota on every channel (null: unlimited). */
export interface TenantDetails {
  id: string;
  name: string;
  status: TenantStatus;
  qpsLimit: number | null;
  /** Its share of the shared send pools against other tenants with due messages, 1 to 100. */
  sendWeight: number;
  dailyQuotas: Record<Channel, number | null>;
  createdAt: string;
}

/** What waits on one channel and lane of a tenant (`GET /v1/admin/tenants/:id/backlog`). */
export interface LaneBacklogView {
  channel: Channel;
  lane: 'transactional' | 'bulk';
  /** Queued or scheduled, due now. */
  due: number;
  /** Queued or scheduled, due later (a send time, a retry's back-off, quiet hours). */
  scheduledLater: number;
  /** Claimed, in flight. */
  sending: number;
  /** The due message that has waited longest; null when none is due. */
  oldestDue: { id: string; dueAt: string } | null;
}

/** A tenant's backlog on every channel and lane, as of `at`. */
export interface TenantBacklogView {
  tenantId: string;
  at: string;
  lanes: LaneBacklogView[];
}

/** One page of tenants, ordered by id; `next` is the cursor of the next page, null at the end. */
export interface TenantPage {
  tenants: TenantDetails[];
  next: string | null;
}

/** An API key as the admin API lists it: never the key itself. */
export interface ApiKeyView {
  id: string;
  /** The key's first characters, to tell keys apart. */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** A tenant just created: its first API key, shown once, and the frequency rules it starts with. */
export interface CreatedTenantView {
  id: string;
  name: string;
  apiKey: string;
  /** The rules set on its sms and email channels (SLUICE_NEW_TENANT_RULES); empty: none. */
  rules: RuleView[];
  /** What the operator should know at once: no rules, so sends to one recipient are unlimited. */
  warnings: string[];
}

/** A frequency rule as the admin API and the CLI write and read it (seconds). */
export interface RuleView {
  windowSeconds: number;
  limit: number;
  banSeconds: number;
  algorithm?: string;
}

/** A tenant channel's fallback while Redis is slow or down; only `static` has rules of its own. */
export interface FallbackView {
  mode: FallbackMode;
  rules?: RuleView[];
}

/** A tenant channel's rule set, in the shape PUT takes (plus `channel` and `version`). */
export interface RuleSetView {
  channel: Channel;
  rules: RuleView[];
  fallback: FallbackView | null;
  /** Bumped by every PUT; 0: never set. */
  version: number;
}

/** A blacklist entry: `recipient` is the canonical key sends are compared with. */
export interface BlacklistEntryView {
  channel: Channel | '*';
  recipient: string;
  reason: string | null;
  createdAt: string;
}

/** One page of a blacklist, ordered by (channel, recipient); `next` is null at the end. */
export interface BlacklistPage {
  entries: BlacklistEntryView[];
  next: string | null;
}

/** A provider as the admin API shows it: no secret (only `hasSecret`). */
export interface ProviderView {
  id: string;
  scope: string;
  channel: Channel;
  kind: ProviderKind;
  name: string;
  priority: number;
  qps: number;
  config: Record<string, unknown>;
  hasSecret: boolean;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * A risk rule as the admin API and the CLI write and read it (seconds). One shape for every kind:
 * which parameters a kind needs is checked by `riskRulesOf` (services/risk-rules.ts). A type, not
 * an interface: it is stored as it is, as a record of its fields.
 */
export type RiskRuleView = {
  name: string;
  kind: RiskRuleKind;
  key: string[];
  mode?: RiskMode;
  effect?: RiskEffect;
  windowSeconds?: number;
  limit?: number;
  banSeconds?: number;
  algorithm?: Algorithm;
  n?: number;
  m?: number;
  outcome?: string;
  of?: string;
  capacity?: number;
  falsePositiveRate?: number;
};

/** An action's risk rule set, in the shape PUT takes (plus `action` and `version`). */
export interface RiskRuleSetView {
  action: string;
  rules: RiskRuleView[];
  version: number;
}

/** One rule that fired in a risk check. */
export interface RiskReasonView {
  rule: string;
  kind: RiskRuleKind;
  code: string;
  effect: RiskEffect;
  count?: number;
  limit?: number;
  retryAfterMs?: number;
  shadow: boolean;
}

/** The answer of a risk check. */
export interface RiskDecisionView {
  allowed: boolean;
  decision: 'allow' | 'review' | 'deny';
  reasons: RiskReasonView[];
  degraded?: boolean;
}

/** A tenant's webhook endpoint; its secret is shown only when made (create, rotate-secret). */
export interface WebhookView {
  id: string;
  tenantId: string;
  /** As stored, with secret-like query parameters masked. */
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  previousSecretUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A webhook with its signing secret, in clear this once. */
export interface WebhookWithSecret extends WebhookView {
  secret: string;
}

/** One event of a webhook, as its tenant lists it. */
export interface WebhookEventView {
  id: string;
  webhookId: string;
  messageId: string;
  type: EventType;
  status: EventStatus;
  attempts: number;
  nextAt: string;
  lastError: string | null;
  createdAt: string;
  /** The JSON body posted, exactly as signed. */
  body: string;
}

/** One stored template version, as the admin API shows it; a vendor's template is shown as the fields it has. */
export interface TemplateVersionView extends Omit<TemplateSpec, 'vendor'> {
  channel: Channel;
  name: string;
  version: number;
  vendor?: Record<string, Record<string, unknown>>;
  createdAt: string;
  retiredAt: string | null;
}

/** A tenant channel's quiet hours. */
export interface QuietHoursView extends QuietHours {
  channel: Channel;
}

/** A tenant's SMS fraud policy, as PUT takes it and GET answers it (docs/fraud.md). */
export type FraudPolicyView = FraudPolicy;

/** The SMS prices: what a message to each country is estimated to cost. */
export type SmsPricesView = SmsPrices;

/** One rule's refusals (or, in monitor mode, would-be refusals) today (UTC), on every instance. */
export interface FraudTallyView {
  rule: FraudRule;
  outcome: Exclude<FraudOutcome, 'pass'>;
  count: number;
}

/** What a tenant's protection did: its mode, this month's estimated spend against the cap, today's refusals by rule. */
export interface FraudStatusView {
  mode: FraudMode;
  /** The calendar month (UTC), `2026-12`. */
  month: string;
  /** The month's estimated spend; `limit` and `currency` null without a cap. */
  spend: { spent: number; limit: number | null; currency: string | null };
  /** The day (UTC) the tallies count, `2026-12-01`. */
  day: string;
  today: FraudTallyView[];
}

/** What SMS pumping protection left on a message, as an operator reads it on the timeline. */
export interface MessageFraudView {
  /** The estimated cost charged to the tenant's month, in the prices' currency; absent: none (or given back). */
  cost?: number;
  /** What a rule in monitor mode would have refused. */
  flags: FraudFlag[];
}

/** The answer to feedback: the message and when it was confirmed (the first report's time). */
export interface FeedbackView {
  id: string;
  outcome: 'confirmed';
  confirmedAt: string;
}

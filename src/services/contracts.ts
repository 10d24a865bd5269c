/**
 * What the entry points (HTTP, CLI) use of a running sluice. The HTTP layer depends on these
 * shapes only; src/main/runtime.ts builds them from storage, Redis and the limiter.
 */
import type { AdmissionChain } from '../admission/chain.js';
import type { SendRequest } from '../admission/context.js';
import type { QuietHours } from '../admission/quiet-hours.js';
import type { TemplateSpec } from '../admission/templates.js';
import type { Channel } from '../core/channels.js';
import type { SluiceError } from '../core/errors.js';
import type { EventStatus, EventType, TenantStatus } from '../core/lifecycle.js';
import type { Decision, Rule } from '../limiter/index.js';
import type { AdminMessageView, BanStatusView, MessageSearch, MessageSearchPage, RulesPreviewView } from './lookup-views.js';
import type { ReceiptService } from './receipt-service.js';
import type {
  ApiKeyView,
  BlacklistPage,
  CreatedTenantView,
  FallbackView,
  FeedbackView,
  FraudPolicyView,
  FraudStatusView,
  MessageView,
  ProviderView,
  QuietHoursView,
  RiskDecisionView,
  RiskRuleSetView,
  RiskRuleView,
  RuleSetView,
  RuleView,
  SmsPricesView,
  TemplateVersionView,
  TenantBacklogView,
  TenantDetails,
  TenantPage,
  WebhookEventView,
  WebhookView,
  WebhookWithSecret,
} from './views.js';

export type {
  ApiKeyView,
  BlacklistEntryView,
  BlacklistPage,
  CreatedTenantView,
  FallbackView,
  MessageView,
  ProviderView,
  QuietHoursView,
  RuleSetView,
  RuleView,
  TemplateVersionView,
  TenantBacklogView,
  TenantDetails,
  TenantPage,
  WebhookEventView,
  WebhookView,
  WebhookWithSecret,
} from './views.js';

/** What a send answers: with `dueAt` (ISO) when it was scheduled, and `deferredBy` when a step (quiet hours) moved it. */
export interface SendOutcome {
  id: string;
  status: string;
  replayed: boolean;
  dueAt?: string;
  deferredBy?: string;
}

/** One message of a batch: its outcome, or the error that refused it. */
export interface BatchResult extends Partial<SendOutcome> {
  index: number;
  error?: { code: string; message: string; [detail: string]: unknown };
}

/** Sending, reading and cancelling messages: what a tenant may do. */
export interface MessageService {
  readonly chain: AdmissionChain;
  /** Runs the chain; resolves `{id, status, replayed}` or rejects with a SluiceError. */
  send(apiKey: string | undefined, request: SendRequest, idempotencyKey?: string): Promise<SendOutcome>;
  /**
   * Each request through the chain on its own (priority `bulk` unless given); results in request
   * order. A SluiceError in place of a request (one its entry point refused, e.g. by schema) is
   * that message's result, and keeps its index.
   */
  sendBatch(apiKey: string | undefined, requests: readonly (SendRequest | SluiceError)[], idempotencyKey?: string): Promise<BatchResult[]>;
  get(tenantId: string, id: string): Promise<MessageView | undefined>;
  /** 'too-late' when already sending or done. */
  cancel(tenantId: string, id: string): Promise<'canceled' | 'not-found' | 'too-late'>;
  /**
   * Feedback: the tenant saw the message's code used. Counts one conversion for the message's
   * country or prefix (docs/fraud.md), once: a repeat answers the first report's time. Undefined:
   * not the tenant's message (404).
   */
  feedback(tenantId: string, id: string, outcome: 'confirmed'): Promise<FeedbackView | undefined>;
}

/**
 * `POST /v1/frequency/check`: a raw limiter decision on any tenant-scoped subject and action, with
 * the rules the caller passes (nothing stored). Not {@link RiskEventService}, whose rules are stored.
 */
export interface FrequencyCheckService {
  check(
    tenantId: string,
    input: { subject: string; action: string; rules: Rule[]; requestId?: string; record: boolean },
  ): Promise<Decision>;
}

/**
 * Risk control on stored rule sets (`POST /v1/risk/check`, `/v1/risk/events`): an event (an action
 * and its dimensions) judged, or its outcome recorded, by the rule set stored for its action.
 */
export interface RiskEventService {
  /** NOT_FOUND without a rule set for the action; INVALID_REQUEST naming a dimension a rule needs and the event lacks. */
  check(
    tenantId: string,
    input: { action: string; dimensions: Record<string, string>; requestId?: string; record: boolean },
  ): Promise<RiskDecisionView>;
  /**
   * Records an outcome (last-n) and the event's values (distinct, seen) without a decision, in
   * each such rule whose dimensions the event carries; the others are named in `skipped`, and an
   * event that feeds none is INVALID_REQUEST. A repeated `requestId` within the set's longest
   * window (a day without one) records nothing (`duplicate`).
   */
  recordEvent(
    tenantId: string,
    input: { action: string; dimensions: Record<string, string>; outcome: string; requestId?: string },
  ): Promise<{ degraded?: boolean; duplicate?: boolean; skipped?: string[] }>;
}

export interface NewProviderInput {
  /** A tenant id, or `*` for every tenant. */
  scope: string;
  channel: Channel;
  /** Checked by the service against the kind table (a CLI argument is any text). */
  kind: string;
  name: string;
  priority?: number;
  qps: number;
  config?: Record<string, unknown>;
  /** Credentials (password, access key secret, signing secret...): sealed at rest, never shown again. */
  secret?: Record<string, string>;
  enabled?: boolean;
}

export type ProviderPatch = Partial<Omit<NewProviderInput, 'scope' | 'channel' | 'kind' | 'secret'>> & {
  secret?: Record<string, string> | null;
};

/** Whose blacklist: one tenant's, or the global one that applies to every tenant. */
export type BlacklistScope = { tenant: string } | 'global';

/**
 * Tenants and their API keys (admin API and CLI). Every change is live at once on every instance;
 * NOT_FOUND is `undefined` (the API's 404).
 */
export interface TenantAdminService {
  /**
   * A tenant, its first API key (shown once) and the frequency rules it starts with
   * (SLUICE_NEW_TENANT_RULES); `sendWeight` 1 to 100, 1 by default.
   */
  createTenant(name: string, qpsLimit?: number | null, sendWeight?: number): Promise<CreatedTenantView>;
  /** The tenant's API keys, active and revoked, without secrets (the first characters only); undefined: no such tenant. */
  listApiKeys(tenantId: string): Promise<ApiKeyView[] | undefined>;
  /**
   * Issues a new API key, shown once. By default every other key of the tenant is revoked in the
   * same transaction (a leaked key); `keepOthers` keeps them for a rollover, to be revoked one by
   * one once clients have moved. Revoked keys stop working on every instance at once.
   * Undefined: no such tenant.
   */
  issueApiKey(tenantId: string, options?: { keepOthers?: boolean }): Promise<{ keyId: string; apiKey: string } | undefined>;
  /** Revokes one active key of the tenant, everywhere at once; false when it has no such active key. */
  revokeApiKey(tenantId: string, keyId: string): Promise<boolean>;
  /** A page of tenants by id (creation order): at most `limit` (1 to 1000, default 100) after the id `after`, a previous page's `next`. */
  listTenants(options?: { limit?: number; after?: string }): Promise<TenantPage>;
  getTenant(id: string): Promise<TenantDetails | undefined>;
  /** What waits to be sent on each channel and lane of the tenant, now; undefined: no such tenant. */
  getBacklog(id: string): Promise<TenantBacklogView | undefined>;
  updateTenant(
    id: string,
    patch: {
      status?: TenantStatus;
      qpsLimit?: number | null;
      sendWeight?: number;
      dailyQuotas?: Partial<Record<Channel, number | null>>;
    },
  ): Promise<TenantDetails | undefined>;
}

/** A tenant's frequency rules per channel and risk rule sets per action (admin API and CLI). NOT_FOUND for an unknown tenant. */
export interface RuleAdminService {
  /** INVALID_REQUEST for a rule the limiter refuses, a static fallback without rules or rules on another mode. */
  setRules(tenantId: string, channel: Channel, rules: RuleView[], fallback?: FallbackView | null): Promise<RuleSetView>;
  getRules(tenantId: string, channel: Channel): Promise<RuleSetView>;
  /**
   * Replaces an action's risk rule set (live everywhere within a second). INVALID_REQUEST naming the
   * field for a rule the engine refuses; NOT_FOUND for an unknown tenant.
   */
  setRiskRules(tenantId: string, action: string, rules: RiskRuleView[]): Promise<RiskRuleSetView>;
  /** An action's risk rule set as PUT takes it; NOT_FOUND for an unknown tenant or an action without one. */
  getRiskRules(tenantId: string, action: string): Promise<RiskRuleSetView>;
}

/** A tenant's blacklist, or the global one (admin API and CLI). NOT_FOUND for an unknown tenant. */
export interface BlacklistAdminService {
  /**
   * Adds recipients under their canonical keys, as sends are matched: for `channel`, or on `*` for
   * each channel that reads the text; `added` lists the keys, `invalid` the texts that are no recipient.
   */
  addToBlacklist(
    scope: BlacklistScope,
    channel: Channel | '*',
    recipients: string[],
    reason?: string,
  ): Promise<{ added: string[]; invalid: string[] }>;
  /** Removes the entries the texts' keys name (as `addToBlacklist` stores them); `removed` counts entries. */
  removeFromBlacklist(scope: BlacklistScope, channel: Channel | '*', recipients: string[]): Promise<{ removed: number; invalid: string[] }>;
  /**
   * A page of entries (at most `limit`, default 100), of one channel value if given; `after` is a
   * previous page's `next`. INVALID_REQUEST for a bad cursor.
   */
  listBlacklist(scope: BlacklistScope, options?: { channel?: Channel | '*'; limit?: number; after?: string }): Promise<BlacklistPage>;
}

/** Delivery providers, a tenant's or every tenant's (admin API and CLI). */
export interface ProviderAdminService {
  /** Registers a provider after checking its config and secret build a working client (INVALID_REQUEST otherwise). */
  createProvider(input: NewProviderInput): Promise<ProviderView>;
  listProviders(filter: { scope?: string; channel?: Channel }): Promise<ProviderView[]>;
  updateProvider(id: string, patch: ProviderPatch): Promise<ProviderView | undefined>;
  deleteProvider(id: string): Promise<boolean>;
}

/** Recipients' bans (admin API and CLI); a ban's status is a lookup ({@link AdminLookupService.banStatus}). */
export interface BanAdminService {
  /**
   * Lifts a recipient's ban on a channel; resolves whether a ban record was still stored (a ban in
   * force, or on Redis one that ended moments ago: `Limiter.unban`). With `resetCounts`
   * also forgets what its rules have counted, so the next send is not refused (and banned again)
   * by the sends that led to the ban. NOT_FOUND for an unknown tenant.
   */
  liftBan(tenantId: string, channel: Channel, to: string, options?: { resetCounts?: boolean }): Promise<boolean>;
}

/** A rules dry run: the rules to replay (absent: the channel's stored ones) and the sends' offsets (ms). */
export interface PreviewInput {
  rules?: (Omit<RuleView, 'banSeconds'> & { banSeconds?: number })[];
  sends: { atMs: number }[];
}

/**
 * Read-only lookups for operators (the console): they change nothing, and every one is scoped to
 * the tenant of its path. NOT_FOUND for an unknown tenant; INVALID_REQUEST naming the field.
 */
export interface AdminLookupService {
  /** The tenant's messages to `to`, newest first, a page at a time (keyset: `cursor`). */
  searchMessages(tenantId: string, search: MessageSearch): Promise<MessageSearchPage>;
  /** The message with its attempts, receipt and status callbacks; undefined when it is not the tenant's. */
  getMessage(tenantId: string, messageId: string): Promise<AdminMessageView | undefined>;
  /** Whether `to` is banned on the channel now, and each rule's count: a peek, consuming and recording nothing. */
  banStatus(tenantId: string, channel: Channel, to: string): Promise<BanStatusView>;
  /** Replays `sends` for one recipient against a fresh in-process limiter: reads no live counts, records nothing. */
  previewRules(tenantId: string, channel: Channel, input: PreviewInput): Promise<RulesPreviewView>;
}

export interface NewWebhookInput {
  url: string;
  /** Default: every type but `message.accepted`. */
  events?: EventType[];
  description?: string | null;
}

export type WebhookPatch = Partial<NewWebhookInput & { enabled: boolean }>;

/**
 * A tenant's webhook endpoints and their events (admin API and CLI). Every call is scoped to the
 * tenant: another tenant's webhook or event is `undefined` (404), never read or changed.
 * INVALID_REQUEST for a URL the policy refuses (not http(s), credentials, private address, not on
 * the allow-list); the problem never quotes the URL.
 */
export interface WebhookAdminService {
  /** Undefined: no such tenant. */
  create(tenantId: string, input: NewWebhookInput): Promise<WebhookWithSecret | undefined>;
  list(tenantId: string): Promise<WebhookView[] | undefined>;
  get(tenantId: string, webhookId: string): Promise<WebhookView | undefined>;
  update(tenantId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookView | undefined>;
  /** Removes the endpoint and its events. */
  remove(tenantId: string, webhookId: string): Promise<boolean>;
  /** A new secret; the old one keeps signing too for the grace period (`SLUICE_WEBHOOK_ROTATE_GRACE_HOURS`). */
  rotateSecret(tenantId: string, webhookId: string): Promise<WebhookWithSecret | undefined>;
  /** The webhook's events in `status` (default `failed`), newest first. */
  listEvents(
    tenantId: string,
    webhookId: string,
    options?: { status?: EventStatus; limit?: number },
  ): Promise<WebhookEventView[] | undefined>;
  /** Makes the event pending again, posted at once and retried for another 24 h. */
  replay(tenantId: string, webhookId: string, eventId: string): Promise<WebhookEventView | undefined>;
}

export interface HealthService {
  /**
   * Readiness: database, Redis, migrations, breaker. A `warning` is shown and does not make the
   * instance unready, even beside `ok: false` (Redis unreachable while the fallback decides).
   */
  ready(): Promise<{ ready: boolean; checks: Record<string, { ok: boolean; detail?: string; warning?: string }> }>;
}

/** Templates and quiet hours per tenant channel (admin). NOT_FOUND for an unknown tenant. */
export interface TemplateAdminService {
  /** Checks and stores `spec` as the next version: INVALID_REQUEST naming the field. */
  putTemplate(tenantId: string, channel: Channel, name: string, spec: TemplateSpec): Promise<TemplateVersionView>;
  /** Every version, newest first; NOT_FOUND when never stored. */
  templateVersions(tenantId: string, channel: Channel, name: string): Promise<TemplateVersionView[]>;
  /** The current version of every live template. */
  listTemplates(tenantId: string, channel?: Channel): Promise<TemplateVersionView[]>;
  /** false when it had no live version. */
  retireTemplate(tenantId: string, channel: Channel, name: string): Promise<boolean>;
  setQuietHours(tenantId: string, channel: Channel, quiet: QuietHours): Promise<QuietHoursView>;
  getQuietHours(tenantId: string, channel: Channel): Promise<QuietHoursView | undefined>;
  removeQuietHours(tenantId: string, channel: Channel): Promise<boolean>;
}

/**
 * SMS pumping protection (admin API and CLI): a tenant's policy, the SMS prices, what the
 * protection did. NOT_FOUND for an unknown tenant, or a tenant without a policy (GET, status).
 */
export interface FraudAdminService {
  /** Checks and replaces the tenant's policy; INVALID_REQUEST naming the field (a cap needs prices in its currency). */
  setPolicy(tenantId: string, policy: Omit<FraudPolicyView, 'mode'> & { mode?: FraudPolicyView['mode'] }): Promise<FraudPolicyView>;
  getPolicy(tenantId: string): Promise<FraudPolicyView>;
  /** CONFLICT when a tenant's cap is in another currency. */
  setPrices(prices: SmsPricesView): Promise<SmsPricesView>;
  /** NOT_FOUND when none are set. */
  getPrices(): Promise<SmsPricesView>;
  /** The month's estimated spend against the cap and today's refusals by rule. */
  status(tenantId: string): Promise<FraudStatusView>;
}

/** The services of a running sluice, each behind its contract. */
export interface Services {
  messages: MessageService;
  frequencyChecks: FrequencyCheckService;
  riskEvents: RiskEventService;
  tenants: TenantAdminService;
  rules: RuleAdminService;
  blacklists: BlacklistAdminService;
  providers: ProviderAdminService;
  bans: BanAdminService;
  lookups: AdminLookupService;
  webhooks: WebhookAdminService;
  receipts: ReceiptService;
  health: HealthService;
  templates: TemplateAdminService;
  fraud: FraudAdminService;
}

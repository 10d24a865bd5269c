/**
 * The SQL schema as Kysely sees it: one interface per table, column names as stored (snake_case).
 *
 * Portable types, because one code path serves SQLite, PostgreSQL and MySQL/MariaDB:
 * - times are epoch milliseconds in BIGINT columns, read back as JS numbers (the drivers are
 *   configured for it in `database.ts`); "now" always comes from the caller, never the DB clock;
 * - booleans are INTEGER 0/1 (SQLite has no boolean, MySQL's is TINYINT): repositories convert;
 * - JSON is TEXT (MEDIUMTEXT on MySQL) holding `JSON.stringify` output: no dialect's JSON type
 *   behaves like another's, and nothing queries inside it;
 * - ids are short text (`ids.ts`), compared byte-wise (MySQL tables use `utf8mb4_bin`).
 *
 * Repositories turn these rows into the camelCase domain types they export; only the storage
 * module touches these interfaces.
 */
import type { Generated, Selectable } from 'kysely';
import type { Channel } from '../core/channels.js';
import type { EventStatus, EventType, MessageStatus, TenantStatus } from '../core/lifecycle.js';
import type { FallbackMode } from '../limiter/index.js';
import type { ProviderKind } from '../providers/kinds.js';

export type { Channel } from '../core/channels.js';

/** The lifecycle vocabulary, owned by core/ (shared with the API, CLI and console). */
export type { EventStatus, EventType, MessageStatus, TenantStatus } from '../core/lifecycle.js';

/** How one delivery attempt ended: `retryable` failures are retried with backoff, `permanent` ones fail the message. */
export type AttemptOutcome = 'sent' | 'retryable' | 'permanent';

/** The vendor integrations a provider row can name: the providers' kind table. */
export type { ProviderKind } from '../providers/kinds.js';

/** `scope`/`channel` value meaning "every tenant" / "every channel" (blacklist, providers). */
export const ANY = '*';

export interface TenantsTable {
  id: string;
  name: string;
  status: TenantStatus;
  /** Requests per second admitted for the whole tenant; NULL = unlimited. */
  qps_limit: number | null;
  /** The tenant's share of the shared delivery pools, 1 to 100 (0018); 1 by default. */
  send_weight: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  /** SHA-256 hex of the clear key. Keys are 256 random bits, so a fast hash is enough. */
  key_hash: string;
  /** The first characters of the clear key, for display ("sk_AbC12…"); never enough to authenticate. */
  key_prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export interface TenantQuotasTable {
  tenant_id: string;
  channel: Channel;
  daily_limit: number;
}

export interface RuleSetsTable {
  tenant_id: string;
  channel: Channel;
  /** JSON array of {@link StoredRule}. */
  rules: string;
  /** JSON {@link StoredFallback} or NULL (use the service default). */
  fallback: string | null;
  /** 1 on first write, +1 on every replace: cache invalidation and optimistic concurrency. */
  version: number;
  updated_at: number;
}

export interface RiskRuleSetsTable {
  tenant_id: string;
  /** The caller's action name (`login`, `otp`...). */
  action: string;
  /** JSON array of {@link StoredRiskRule}. */
  rules: string;
  /** 1 on first write, +1 on every replace. */
  version: number;
  updated_at: number;
}

/**
 * One risk rule as configured (seconds, like the HTTP API): `name`, `kind`, `key`, `mode`,
 * `effect` and the kind's parameters (`windowSeconds`, `limit`, `banSeconds`, `algorithm`, `n`,
 * `m`, `outcome`, `of`, `capacity`, `falsePositiveRate`). The library validates it (`normalizeRiskRules`).
 */
export type StoredRiskRule = Record<string, unknown> & { name: string; kind: string; key: string[] };

export interface BlacklistTable {
  /** Tenant id, or `'*'` for the global list. */
  scope: string;
  /** Channel, or `'*'` for every channel. */
  channel: Channel | typeof ANY;
  /** Normalised recipient (E.164 phone, lower-cased email domain, webhook target). */
  recipient: string;
  reason: string | null;
  created_at: number;
}

export interface ProvidersTable {
  id: string;
  /** Tenant id, or `'*'` for a provider every tenant may use. */
  scope: string;
  channel: Channel;
  kind: ProviderKind;
  name: string;
  /** Lower is tried first (like MX preference). */
  priority: number;
  /** The vendor's QPS contract for this account. */
  qps: number;
  /** Non-secret JSON settings (host, sign name, template ids...). */
  config: string;
  /** `SecretBox` ciphertext of the secret (password, access key secret, signing key), or NULL. */
  secret: string | null;
  /** 1 enabled, 0 disabled. */
  enabled: number;
  created_at: number;
  updated_at: number;
}

export interface MessagesTable {
  /** Time-sortable id (`newMessageId()`). */
  id: string;
  tenant_id: string;
  channel: Channel;
  recipient: string;
  /** JSON {@link MessagePayload}. */
  payload: string;
  status: MessageStatus;
  /** When the message may be sent (epoch ms). */
  due_at: number;
  /** Claims so far; also the fencing token of the current claim. */
  attempts: number;
  max_attempts: number;
  /** 0..1023 from a hash of the id; dispatcher partition p of P owns `shard % P == p`. */
  shard: number;
  provider_id: string | null;
  provider_message_id: string | null;
  last_error: string | null;
  /** While `sending`: when the claim expires and the message may be claimed again. */
  lease_until: number | null;
  /** Random token written by the claiming statement, so a batch claim can read back exactly what it moved. */
  claim_token: string | null;
  idempotency_key: string | null;
  /** Hash of the request body that carried `idempotency_key`: a replay with another body is a conflict. */
  request_hash: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
  /** 0 transactional, 1 bulk: a claim takes lane 0's due messages first. */
  priority: number;
  /** The vendor's delivery receipt: `delivered`/`undelivered`, its code (`DELIVRD`, `UNDELIV`...), when the phone got it (or not). */
  receipt_status: string | null;
  receipt_code: string | null;
  receipt_at: number | null;
  /**
   * When the message was last published to the broker (0010; broker mode only): the due index and
   * the due query leave it to the broker until the sweep's bound passes. NULL: not handed off.
   */
  handed_off_at: number | null;
  /** When the tenant reported the message's code used (`POST /v1/messages/:id/feedback`, 0012); NULL: not confirmed. */
  confirmed_at: number | null;
  /** The estimated cost charged to the tenant's month (`sms_spend`), in millionths of the prices' currency; NULL: none, or given back by a cancel (0012). */
  cost_micros: number | null;
  /** JSON array of `{rule, code, message}`: what SMS pumping protection in monitor mode would have refused (0012); NULL: nothing. */
  fraud_flags: string | null;
}

/** One version of a message template (0007); the current one is the highest, unless retired. */
export interface MessageTemplatesTable {
  tenant_id: string;
  channel: Channel;
  name: string;
  version: number;
  /** JSON: params, body, subject, html, vendor (admission/templates.ts `TemplateSpec`). */
  spec: string;
  created_at: number;
  /** Set on every version by DELETE; a later PUT makes a new live version. */
  retired_at: number | null;
}

/** Quiet hours of a tenant channel (0007). */
export interface QuietHoursTable {
  tenant_id: string;
  channel: Channel;
  /** JSON: timeZone, windows, applies. */
  spec: string;
  updated_at: number;
}

/** A tenant's fraud policy on a channel (0011; `sms` only today). */
export interface FraudPoliciesTable {
  tenant_id: string;
  channel: Channel;
  /** JSON: the policy as `PUT …/fraud/sms` takes it (admission/fraud-policy.ts `FraudPolicy`). */
  spec: string;
  updated_at: number;
}

/** What a message of a channel is estimated to cost (0011; `sms` only today): one row per channel. */
export interface PricesTable {
  channel: Channel;
  /** JSON: `{currency, default, countries}` (admission/fraud-policy.ts `SmsPrices`). */
  spec: string;
  updated_at: number;
}

/** A tenant's estimated SMS spend in one calendar month (UTC), in millionths of the prices' currency (0011). */
export interface SmsSpendTable {
  tenant_id: string;
  /** `2026-12`. */
  month: string;
  spent_micros: number;
  updated_at: number;
}

/** The hash of a provider's receipt token: `POST /v1/receipts/:providerId` must carry the token. */
export interface ReceiptTokensTable {
  provider_id: string;
  /** SHA-256 hex of the token (256 random bits: a fast hash is enough). */
  token_hash: string;
  created_at: number;
}

/** A receipt that arrived before its message's send was settled (vendors can be faster than our commit); applied at the settle. */
export interface PendingReceiptsTable {
  provider_id: string;
  provider_message_id: string;
  /** 1 delivered, 0 undelivered. */
  delivered: number;
  code: string;
  at: number;
  received_at: number;
}

export interface WebhooksTable {
  id: string;
  tenant_id: string;
  url: string;
  /** JSON array of {@link EventType}. */
  events: string;
  description: string | null;
  /** `SecretBox` ciphertext of the signing secret (context: the webhook id). */
  secret: string;
  /** The secret before the last rotation, still signed with until `previous_until`; NULL when none. */
  previous_secret: string | null;
  previous_until: number | null;
  /** 0..1023 from a hash of the id: which event dispatcher partition sends its events. */
  shard: number;
  /** 1 enabled, 0 disabled (no events are written for it). */
  enabled: number;
  created_at: number;
  updated_at: number;
}

/**
 * The outbox: one row per (status change, subscribed webhook), written in the transaction of the
 * status change. `event_id` is the same for every webhook of one change (`Sluice-Event-Id`).
 */
export interface WebhookEventsTable {
  webhook_id: string;
  event_id: string;
  tenant_id: string;
  message_id: string;
  /** Order of the event within its message (accepted 0, finished 1): a later step waits for the earlier ones. */
  step: number;
  type: EventType;
  /** The JSON body posted, exactly as signed. */
  body: string;
  status: EventStatus;
  /** Posts tried so far. */
  attempts: number;
  /** While pending: when the next post is due (epoch ms). */
  next_at: number;
  /** A post failing after this is not retried: the event becomes `failed` (SLUICE_WEBHOOK_RETRY_HOURS after it was written or replayed). */
  give_up_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface DeliveryAttemptsTable {
  id: string;
  message_id: string;
  attempt_no: number;
  provider_id: string | null;
  started_at: number;
  finished_at: number;
  outcome: AttemptOutcome;
  error: string | null;
  provider_message_id: string | null;
}

/** The embedded limiter's snapshot (main/limiter-snapshots.ts): one row per name, replaced at each save. */
export interface LimiterSnapshotsTable {
  name: string;
  taken_at: number;
  body: string;
}

/** Every table sluice stores, keyed by table name: the `Kysely<Tables>` type parameter. */
/** A status event waiting to be published on the bus (0010): the outbox of the broker's events stream. */
export interface BusEventsTable {
  /** `evt_…`, the webhook's event id for the same change: the bus's de-duplication id. */
  event_id: string;
  message_id: string;
  tenant_id: string;
  /** The message's shard: the bus publisher partition p of P owns `shard % P == p`, so a message's events stay in order. */
  shard: number;
  type: EventType;
  /** The JSON body, byte for byte the webhook's. */
  body: string;
  created_at: number;
}

export interface Tables {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  tenant_quotas: TenantQuotasTable;
  rule_sets: RuleSetsTable;
  risk_rule_sets: RiskRuleSetsTable;
  blacklist: BlacklistTable;
  providers: ProvidersTable;
  messages: MessagesTable;
  delivery_attempts: DeliveryAttemptsTable;
  message_templates: MessageTemplatesTable;
  quiet_hours: QuietHoursTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  receipt_tokens: ReceiptTokensTable;
  pending_receipts: PendingReceiptsTable;
  bus_events: BusEventsTable;
  fraud_policies: FraudPoliciesTable;
  prices: PricesTable;
  sms_spend: SmsSpendTable;
  limiter_snapshots: LimiterSnapshotsTable;
}

/** One frequency rule as configured (seconds, like the HTTP API); the limiter takes milliseconds. */
export interface StoredRule {
  windowSeconds: number;
  limit: number;
  /** 0 = no ban. */
  banSeconds: number;
  /** Limiter algorithm name; absent = `sliding-log`. */
  algorithm?: string;
}

/**
 * Degradation policy of a rule set (DESIGN.md §7) when Redis is slow or down. Stored as given;
 * the degradation module owns the meaning of each field.
 */
export interface StoredFallback {
  mode: FallbackMode;
  /** For `static`: the looser rules to apply. */
  rules?: StoredRule[];
  /** Fraction 0..1 of decisions to sample in `allow`/`deny` modes. */
  sampleRate?: number;
  [extra: string]: unknown;
}

/** What a message carries to its provider; which fields matter depends on the channel. */
export interface MessagePayload {
  template?: string;
  params?: Record<string, unknown>;
  subject?: string;
  body?: string;
  html?: string;
  /** A stored template's name and the version it was rendered with (pinned at acceptance). */
  stored?: { name: string; version: number };
  /** The stored template's vendor templates, by provider id or kind. */
  vendor?: Record<string, { templateCode: string; signName?: string; paramOrder?: string[]; [extra: string]: unknown }>;
}

export type TenantRow = Selectable<TenantsTable>;
export type MessageRow = Selectable<MessagesTable>;

/**
 * What the interceptors need from the rest of sluice, described by the shape they use, so the
 * chain is tested with real stores and wired to whatever backs them (SQL + caches).
 */
import type { Channel } from '../core/channels.js';
import type { CheckRequest, Decision, FallbackPolicy, Rule, UndoRequest } from '../limiter/index.js';
import type { AdmissionOutcome, TenantView, ValidatedMessage } from './context.js';
import type { FraudMode, FraudOutcome, FraudPolicy, FraudRule, SmsPrices } from './fraud-policy.js';
import type { QuietHours } from './quiet-hours.js';
import type { StoredTemplate } from './templates.js';

/**
 * A tenant channel's part of the limiter's {@link FallbackPolicy} (DESIGN.md §7): its mode and
 * static rules; the instance-wide part (divideBy, sampleRate) comes from the settings.
 */
export type TenantFallback = Pick<FallbackPolicy, 'mode' | 'staticRules'>;

/** Everything about a tenant channel that admission needs. */
export interface ChannelPolicy {
  /** The frequency rules per recipient; empty: no frequency control on this channel. */
  rules: Rule[];
  /** Admitted messages per UTC day on this channel; null: unlimited. */
  dailyLimit: number | null;
  fallback?: TenantFallback;
}

export interface TenantDirectory {
  /** The tenant owning this API key, or undefined for an unknown or revoked key. */
  tenantByApiKey(apiKey: string): Promise<TenantView | undefined>;
  channelPolicy(tenantId: string, channel: Channel): Promise<ChannelPolicy>;
}

export interface BlacklistLookup {
  /** True when the recipient is blacklisted by the tenant or globally, on this channel or all. */
  isBlacklisted(tenantId: string, channel: Channel, recipient: string): Promise<boolean>;
}

/** A suppression as admission reports it (`RECIPIENT_SUPPRESSED`). */
export interface SuppressionFound {
  category: string;
  source: string;
  reason: string | null;
  /** When it was made (epoch ms). */
  since: number;
}

export interface SuppressionLookup {
  /** The suppression that stops a send of `category` (undefined: none named) to this recipient key, if any. */
  suppression(
    tenantId: string,
    channel: Channel,
    recipientKey: string,
    category: string | undefined,
  ): Promise<SuppressionFound | undefined>;
}

/** A message accepted earlier under an Idempotency-Key. */
export interface StoredIdempotentMessage {
  id: string;
  status: string;
  requestHash: string | null;
}

export interface NewMessage extends ValidatedMessage {
  id: string;
  tenantId: string;
  createdAt: number;
  idempotencyKey: string | undefined;
  requestHash: string | undefined;
  /** The `send {channel}` span's context (W3C `traceparent`, `tracestate`), stored so later spans continue its trace. */
  traceparent?: string | null;
  tracestate?: string | null;
}

export interface MessageWriter {
  findByIdempotencyKey(tenantId: string, key: string): Promise<StoredIdempotentMessage | undefined>;
  /** Durably stores the message; rejects with IdempotencyKeyTaken when the key is taken. */
  insert(message: NewMessage): Promise<void>;
  /** Told after commit: wakes the dispatcher for immediate messages, adds to the due index. */
  accepted?(message: NewMessage, outcome: AdmissionOutcome): void;
}

/**
 * Lets one attempt per (tenant, Idempotency-Key) through the consuming steps at a time: a twin
 * sent alongside waits for the first's answer and replays it, instead of taking a quota unit and
 * a frequency slot of its own (which could refuse it, or ban the recipient, meanwhile).
 */
export interface IdempotencyGuard {
  /** Resolves how to let go when this attempt now holds the key; undefined when another attempt holds it. */
  tryHold(tenantId: string, key: string): Promise<(() => Promise<void>) | undefined>;
  /** Resolves once the key may be free again (its holder let go, or a poll's interval passed), at the latest after `ms`. */
  waitForRelease(tenantId: string, key: string, ms: number): Promise<void>;
}

/** Thrown by MessageWriter.insert when (tenant, Idempotency-Key) already exists. */
export class IdempotencyKeyTaken extends Error {
  override name = 'IdempotencyKeyTaken';
}

/**
 * One recipient's frequency request, the same object from the interceptor down to the store: the
 * limiter's check (`requestId` = the message id; `countAt` = a scheduled message's due time) and
 * the tenant channel's fallback.
 */
export interface FrequencyRequest extends CheckRequest {
  requestId: string;
  fallback?: TenantFallback | undefined;
}

/** The frequency decision for one recipient (the limiter, possibly behind the degradation breaker). */
export interface FrequencyGate {
  check(request: FrequencyRequest): Promise<Decision>;
  /** Take back an admitted attempt; `decision` is what `check` answered (it says which store decided). */
  undo(request: FrequencyRequest, decision: Decision): Promise<void>;
  /**
   * The rules `decision.rule` indexes: the request's rules when they decided, the fallback's own
   * (the static rules, the local share of the rules) when a fallback did, none when no rule did (`deny`).
   */
  decidingRules(request: FrequencyRequest, decision: Decision): readonly Rule[] | undefined;
}

/** The stored templates of a tenant, as admission reads them (the live cache). */
export interface TemplateLookup {
  /** The current (highest, not retired) version of the template, or undefined when there is none. */
  current(tenantId: string, channel: Channel, name: string): Promise<StoredTemplate | undefined>;
}

/** A tenant channel's quiet hours, as admission reads them (the live cache). */
export interface QuietHoursLookup {
  get(tenantId: string, channel: Channel): Promise<QuietHours | undefined>;
}

/** A tenant's SMS fraud policy and the SMS prices, as admission reads them (the live caches). */
export interface FraudPolicyLookup {
  policy(tenantId: string): Promise<FraudPolicy | undefined>;
  prices(): Promise<SmsPrices | undefined>;
}

/**
 * The limiter as SMS pumping protection uses it: checks and undos (behind the breaker, as quotas
 * are), and a peek of the confirmations a conversion rule counts (no fallback: it rejects while
 * the shared store is away).
 */
export interface FraudLimiter {
  check(request: CheckRequest): Promise<Decision & { degraded?: string }>;
  undo(request: UndoRequest & { degraded?: string }): Promise<unknown>;
  peek(request: Omit<CheckRequest, 'requestId'>): Promise<Decision>;
}

/**
 * A tenant's estimated SMS spend per calendar month (UTC), in millionths of the prices' currency:
 * money, so it is kept durably (SQL), and each change is atomic.
 */
export interface SpendLedger {
  /** Adds `costMicros` to the tenant's `month` if the total stays within `capMicros` (true); else adds nothing (false). */
  reserve(tenantId: string, month: string, costMicros: number, capMicros: number): Promise<boolean>;
  /** Takes back what a reserve added (a later step refused the send); never below zero. */
  release(tenantId: string, month: string, costMicros: number): Promise<void>;
}

/** Told each rule's decision on each send (metrics), and a failure to count it for the console. */
export interface FraudObserver {
  decided?(rule: FraudRule, outcome: FraudOutcome, mode: FraudMode): void;
  tallyFailed?(error: unknown): void;
}

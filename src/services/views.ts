/**
 * What the services answer, as TypeBox schemas: the one definition of each view. The HTTP API
 * serialises its answers with them (and publishes them at /docs); the services and the CLI use
 * the types derived from them (`Static`), so the two cannot drift.
 */
import { type Static, type StringOptions, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { CHANNELS, perChannel } from '../core/channels.js';
import { ALGORITHMS, FALLBACK_MODES, RISK_EFFECTS, RISK_LIMITS, RISK_MODES, RISK_RULE_KINDS } from '../limiter/index.js';
import { PROVIDER_KINDS } from '../providers/kinds.js';
import { EVENT_STATUSES, EVENT_TYPES, MESSAGE_STATUSES, TENANT_STATUSES } from '../storage/schema.js';

/**
 * A string among `values`: JSON Schema's `{type: 'string', enum}` (as `Type.String` writes it, so
 * TypeBox's `Value` checks it as a string and ajv checks the enum), typed as the union of `values`.
 */
export const stringEnum = <const T extends string>(values: readonly T[], options: StringOptions = {}): TUnsafe<T> =>
  Type.Unsafe<T>(Type.String({ enum: [...values], ...options }));

/** An object with one property per channel, each of `schema`. */
export const perChannelObject = <T extends TSchema>(schema: T, options: { additionalProperties?: boolean } = {}) =>
  Type.Object(
    perChannel(() => schema),
    options,
  );

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Iso = Type.String({ format: 'date-time' });
export const ChannelName = stringEnum(CHANNELS);
/** A channel, or `*`: every channel (blacklists). */
export const CHANNEL_OR_ANY = [...CHANNELS, '*'] as const;
export const ChannelOrAny = stringEnum(CHANNEL_OR_ANY);
export const TenantStatusName = stringEnum(TENANT_STATUSES);
export const MessageStatusName = stringEnum(MESSAGE_STATUSES);

/** A message as its tenant reads it, with its delivery attempts. */
export const MessageView = Type.Object({
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
});
export type MessageView = Static<typeof MessageView>;

/** A tenant as the admin API and the CLI show it: its daily quota on every channel (null: unlimited). */
export const TenantDetails = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: TenantStatusName,
  qpsLimit: Nullable(Type.Integer()),
  dailyQuotas: perChannelObject(Nullable(Type.Integer())),
  createdAt: Iso,
});
export type TenantDetails = Static<typeof TenantDetails>;

/** One page of tenants, ordered by id; `next` is the cursor of the next page, null at the end. */
export const TenantPage = Type.Object({
  tenants: Type.Array(TenantDetails),
  next: Nullable(Type.String({ description: 'Pass as `after` for the next page; null: the last page' })),
});
export type TenantPage = Static<typeof TenantPage>;

/** An API key as the admin API lists it: never the key itself. */
export const ApiKeyView = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: "The key's first characters, to tell keys apart" }),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type ApiKeyView = Static<typeof ApiKeyView>;

/** A frequency rule as the admin API and the CLI write and read it (seconds). */
export const RuleView = Type.Object({
  windowSeconds: Type.Integer(),
  limit: Type.Integer(),
  banSeconds: Type.Integer(),
  algorithm: Type.Optional(Type.String()),
});
export type RuleView = Static<typeof RuleView>;

/** A tenant channel's fallback while Redis is slow or down; only `static` has rules of its own. */
export const FallbackView = Type.Object({ mode: stringEnum(FALLBACK_MODES), rules: Type.Optional(Type.Array(RuleView)) });
export type FallbackView = Static<typeof FallbackView>;

/**
 * A tenant channel's rule set, in the shape `PUT .../rules/:channel` takes (plus `channel` and
 * `version`): what GET answers can be PUT back as it is.
 */
export const RuleSetView = Type.Object(
  {
    channel: ChannelName,
    rules: Type.Array(RuleView),
    fallback: Nullable(FallbackView),
    version: Type.Integer({ description: 'Bumped by every PUT; 0: never set' }),
  },
  { description: 'The shape PUT takes: it can be PUT back as it is' },
);
export type RuleSetView = Static<typeof RuleSetView>;

/** A blacklist entry: `recipient` is the canonical key (E.164 phone, case-folded email without `+tag`...) sends are compared with. */
export const BlacklistEntryView = Type.Object({
  channel: ChannelOrAny,
  recipient: Type.String(),
  reason: Nullable(Type.String()),
  createdAt: Iso,
});
export type BlacklistEntryView = Static<typeof BlacklistEntryView>;

/** One page of a blacklist, ordered by (channel, recipient); `next` is the cursor of the next page, null at the end. */
export const BlacklistPage = Type.Object({
  entries: Type.Array(BlacklistEntryView),
  next: Nullable(Type.String({ description: 'Pass as `after` for the next page; null: the last page' })),
});
export type BlacklistPage = Static<typeof BlacklistPage>;

/** A provider as the admin API shows it: no secret (only `hasSecret`), times as ISO 8601 like every other view. */
export const ProviderView = Type.Object({
  id: Type.String(),
  scope: Type.String(),
  channel: ChannelName,
  kind: stringEnum(PROVIDER_KINDS),
  name: Type.String(),
  priority: Type.Integer(),
  qps: Type.Integer(),
  config: Type.Record(Type.String(), Type.Unknown()),
  hasSecret: Type.Boolean({ description: 'The secret itself is never shown' }),
  enabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type ProviderView = Static<typeof ProviderView>;

const MAX_WINDOW_SECONDS = RISK_LIMITS.windowMs / 1000;
const DimensionName = Type.String({ minLength: 1, maxLength: RISK_LIMITS.nameLength });

/**
 * A risk rule as the admin API and the CLI write and read it (seconds). One object for every
 * kind: which parameters a kind needs is checked by the service (`normalizeRiskRules`), which
 * names the missing field; here are the types and bounds.
 */
export const RiskRuleView = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: RISK_LIMITS.nameLength }),
    kind: stringEnum(RISK_RULE_KINDS),
    key: Type.Array(DimensionName, {
      minItems: 1,
      maxItems: RISK_LIMITS.keyDimensions,
      description: 'Dimensions whose values form the subject',
    }),
    mode: Type.Optional(
      stringEnum(RISK_MODES, { description: 'enforce (default) or shadow: evaluated, recorded, reported, never decides' }),
    ),
    effect: Type.Optional(stringEnum(RISK_EFFECTS, { description: 'deny (default) or review' })),
    windowSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WINDOW_SECONDS, description: 'window, distinct, seen' })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'window; distinct (exact up to 10,000, a HyperLogLog above)' }),
    ),
    banSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WINDOW_SECONDS, description: 'window' })),
    algorithm: Type.Optional(stringEnum(ALGORITHMS, { description: 'window' })),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: RISK_LIMITS.lastN, description: 'last-n: events looked at' })),
    m: Type.Optional(Type.Integer({ minimum: 1, maximum: RISK_LIMITS.lastN, description: 'last-n: matches that fire' })),
    outcome: Type.Optional(Type.String({ minLength: 1, maxLength: RISK_LIMITS.outcomeLength, description: 'last-n: the outcome counted' })),
    of: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: RISK_LIMITS.nameLength,
        description: 'distinct, seen: the dimension whose values are counted',
      }),
    ),
    capacity: Type.Optional(
      Type.Integer({ minimum: 1, maximum: RISK_LIMITS.seenCapacity, description: 'seen: values per filter (default 1000)' }),
    ),
    falsePositiveRate: Type.Optional(Type.Number({ minimum: 1e-9, maximum: 0.5, description: 'seen: bound at capacity (default 0.001)' })),
  },
  { additionalProperties: false },
);
export type RiskRuleView = Static<typeof RiskRuleView>;

/** An action's risk rule set, in the shape `PUT .../risk/:action` takes (plus `action` and `version`). */
export const RiskRuleSetView = Type.Object({
  action: Type.String(),
  rules: Type.Array(RiskRuleView),
  version: Type.Integer({ description: 'Bumped by every PUT' }),
});
export type RiskRuleSetView = Static<typeof RiskRuleSetView>;

/** One rule that fired in a risk check. */
export const RiskReasonView = Type.Object({
  rule: Type.String(),
  kind: stringEnum(RISK_RULE_KINDS),
  code: Type.String({ description: 'RATE_LIMITED, BANNED, LAST_N_MATCHED, DISTINCT_LIMIT or NOT_SEEN' }),
  effect: stringEnum(RISK_EFFECTS),
  count: Type.Optional(Type.Integer()),
  limit: Type.Optional(Type.Integer()),
  retryAfterMs: Type.Optional(Type.Integer()),
  shadow: Type.Boolean({ description: 'A shadow rule: reported, never part of the decision' }),
});

/** The answer of `POST /v1/risk/check`. */
export const RiskDecisionView = Type.Object({
  allowed: Type.Boolean({ description: 'false only for decision deny' }),
  decision: stringEnum(['allow', 'review', 'deny'] as const),
  reasons: Type.Array(RiskReasonView),
  degraded: Type.Optional(Type.Boolean({ description: 'Redis could not answer: the fallback mode decided (docs/degradation.md)' })),
});
export type RiskDecisionView = Static<typeof RiskDecisionView>;

export const EventTypeName = stringEnum(EVENT_TYPES);
export const EventStatusName = stringEnum(EVENT_STATUSES);

/** A tenant's webhook endpoint; its secret is shown only when made (create, rotate-secret). */
export const WebhookView = Type.Object({
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
});
export type WebhookView = Static<typeof WebhookView>;

/** A webhook with its signing secret, in clear this once. */
export const WebhookWithSecret = Type.Composite([
  WebhookView,
  Type.Object({ secret: Type.String({ description: 'Shown once; sealed at rest' }) }),
]);
export type WebhookWithSecret = Static<typeof WebhookWithSecret>;

/** One event of a webhook, as its tenant lists it. */
export const WebhookEventView = Type.Object({
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
});
export type WebhookEventView = Static<typeof WebhookEventView>;

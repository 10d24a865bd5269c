/** Request and response schemas (TypeBox): they validate bodies and make the OpenAPI at /docs. */
import { type TSchema, Type } from '@sinclair/typebox';
import { PRIORITIES } from '../admission/context.js';
import { PARAM_VALUE_LIMIT } from '../admission/template-patterns.js';
import { CONTENT_LIMITS } from '../admission/templates.js';
import { CHANNELS } from '../core/channels.js';
import { ALGORITHMS, FALLBACK_MODES, RISK_LIMITS } from '../limiter/index.js';
import { PROVIDER_KINDS } from '../providers/kinds.js';
import {
  ApiKeyView,
  CHANNEL_OR_ANY,
  ChannelName,
  ChannelOrAny,
  EventStatusName,
  EventTypeName,
  ProviderView,
  perChannelObject,
  RiskRuleView,
  stringEnum,
  TenantStatusName,
  WebhookEventView,
  WebhookView,
} from '../services/views.js';

/** TypeBox turns a record's key schema into a pattern and drops its length: `propertyNames` keeps it. */
const KEY = { propertyNames: { maxLength: 64 } };
const Params = Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String({ maxLength: PARAM_VALUE_LIMIT }), Type.Number()]), {
  maxProperties: 50,
  ...KEY,
});

export const SendBody = Type.Object(
  {
    channel: stringEnum(CHANNELS, { description: 'sms, email or webhook' }),
    to: Type.String({ minLength: 1, maxLength: 320, description: 'Phone (E.164 or national), email address, or webhook target' }),
    template: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
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
  },
  {
    additionalProperties: false,
    examples: [{ channel: 'sms', to: '+8613800138000', body: 'Your code is 1234' }],
  },
);

export const Accepted = Type.Object({
  id: Type.String(),
  status: Type.String(),
  dueAt: Type.Optional(Type.String({ description: 'When a scheduled message is due' })),
  deferredBy: Type.Optional(Type.String({ description: '`quiet-hours` when the tenant channel’s quiet hours moved the message' })),
});

/** Who may call a route, for the OpenAPI document (`security` of each operation). */
export const SECURITY = {
  tenant: [{ apiKey: [] }],
  admin: [{ adminToken: [] }],
  receipt: [{ receiptToken: [] }],
  none: [],
};

export const ErrorBody = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true }),
});

export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const RuleBody = Type.Object(
  {
    windowSeconds: Type.Integer({ minimum: 1, maximum: 400 * 86_400 }),
    limit: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
    banSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 400 * 86_400 })),
    algorithm: Type.Optional(stringEnum(ALGORITHMS)),
  },
  { additionalProperties: false },
);

const FallbackBody = Type.Object(
  {
    mode: stringEnum(FALLBACK_MODES),
    rules: Type.Optional(Type.Array(RuleBody, { minItems: 1, maxItems: 16, description: 'Only (and required) for mode static' })),
  },
  { additionalProperties: false },
);

/** What PUT .../rules/:channel takes and GET answers, so a GET's answer can be PUT back as it is. */
export const RuleSetBody = Type.Object(
  {
    channel: Type.Optional(stringEnum(CHANNELS, { description: "Read-only (GET's); if sent, the path's channel" })),
    version: Type.Optional(Type.Integer({ minimum: 0, description: "Read-only (GET's: bumped by every PUT); ignored" })),
    rules: Type.Array(RuleBody, { maxItems: 16 }),
    fallback: Type.Optional(
      Type.Union([FallbackBody, Type.Null()], {
        description: 'While Redis is slow or down; absent or null: the service default (SLUICE_FALLBACK_MODE)',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        rules: [
          { windowSeconds: 60, limit: 3, banSeconds: 600 },
          { windowSeconds: 3600, limit: 10 },
          { windowSeconds: 86400, limit: 50 },
        ],
        fallback: { mode: 'local' },
      },
    ],
  },
);

/**
 * A risk check's rule: the tenant's own, so held closer than the rules an operator sets. What a
 * tenant can make the limiter keep is its checks per second over the longest window: 31 days.
 */
const RiskRuleBody = Type.Object(
  {
    windowSeconds: Type.Integer({ minimum: 1, maximum: 31 * 86_400 }),
    limit: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    banSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 31 * 86_400 })),
    algorithm: RuleBody.properties.algorithm,
  },
  { additionalProperties: false },
);

export const FrequencyCheckBody = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 256, description: 'Who, e.g. a user id' }),
    action: Type.String({ minLength: 1, maxLength: 64, description: 'What, e.g. "send-code"' }),
    rules: Type.Array(RiskRuleBody, { minItems: 1, maxItems: 16 }),
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    record: Type.Optional(Type.Boolean({ description: 'false: only look (peek), record nothing' })),
  },
  {
    additionalProperties: false,
    examples: [
      { subject: 'user-42', action: 'send-code', rules: [{ windowSeconds: 300, limit: 3, banSeconds: 900 }], requestId: 'req-7f3a' },
    ],
  },
);

export const Decision = Type.Object({
  allowed: Type.Boolean(),
  code: Type.String(),
  rule: Type.Optional(
    Type.Integer({ description: 'The rule that refused (its index in `rules`, or in the static fallback rules when degraded is static)' }),
  ),
  retryAfterMs: Type.Integer(),
  counts: Type.Array(Type.Integer()),
  degraded: Type.Optional(
    stringEnum(FALLBACK_MODES, { description: 'Present when Redis could not decide and this fallback did (docs/degradation.md)' }),
  ),
});

export const ChannelParam = Type.Object({
  id: Type.String({ maxLength: 64 }),
  channel: ChannelName,
});

/**
 * A tenant's quotas are limiter rules (token bucket per second, fixed window per UTC day): a value
 * the limiter refuses (a limit above 1e9) would be stored, then fail every send with a 503. Taken
 * here, one range for create and patch; the CLI checks its bodies against these schemas too.
 */
const QpsLimit = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()], {
  description: 'Requests per second for the whole tenant, 1 to 1,000,000; null: unlimited',
});
const DailyQuota = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], {
  description: 'Admitted messages per UTC day on this channel, 1 to 1,000,000,000; null: unlimited',
});

export const NewTenantBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9 _.-]*$' }),
    qpsLimit: Type.Optional(QpsLimit),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'acme', qpsLimit: 200 }],
  },
);

export const TenantPatchBody = Type.Object(
  {
    status: Type.Optional(TenantStatusName),
    qpsLimit: Type.Optional(QpsLimit),
    dailyQuotas: Type.Optional(perChannelObject(Type.Optional(DailyQuota), { additionalProperties: false })),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** Stored free text: no control characters (PostgreSQL refuses NUL outright, and none belongs in a name or a note). */
const PLAIN_TEXT = '^[^\\u0000-\\u001f\\u007f]*$';

export const BlacklistBody = Type.Object(
  {
    channel: Type.Optional(ChannelOrAny),
    recipients: Type.Array(Type.String({ minLength: 1, maxLength: 320 }), { minItems: 1, maxItems: 1000 }),
    reason: Type.Optional(Type.String({ maxLength: 200, pattern: PLAIN_TEXT })),
  },
  { additionalProperties: false },
);

export const BlacklistRemoveBody = Type.Omit(BlacklistBody, ['reason']);

/** Query strings are not coerced: `limit` is digits here, its range the service's. */
export const BlacklistQuery = Type.Object(
  {
    channel: Type.Optional(stringEnum(CHANNEL_OR_ANY, { description: 'Only entries of this channel value' })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'Entries per page, 1 to 1000; default 100' })),
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: "A previous page's `next`" })),
  },
  { additionalProperties: false },
);

export const BanParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  channel: ChannelName,
  to: Type.String({ minLength: 1, maxLength: 320 }),
});

const Secret = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), {
  ...KEY,
  maxProperties: 20,
  description: 'Credentials; sealed at rest and never returned',
});
const ProviderConfig = Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 50, ...KEY });

export const NewProviderBody = Type.Object(
  {
    scope: Type.String({ minLength: 1, maxLength: 64, description: 'A tenant id, or * for every tenant' }),
    channel: ChannelName,
    kind: stringEnum(PROVIDER_KINDS),
    name: Type.String({ minLength: 1, maxLength: 100, pattern: PLAIN_TEXT }),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: 'Lower is tried first' })),
    qps: Type.Integer({ minimum: 1, maximum: 100_000, description: "The vendor's QPS contract; sends are paced to it" }),
    config: Type.Optional(ProviderConfig),
    secret: Type.Optional(Secret),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    examples: [
      {
        scope: '*',
        channel: 'email',
        kind: 'smtp',
        name: 'relay',
        qps: 50,
        config: { host: 'smtp.example.com', port: 587, from: 'noreply@example.com' },
        secret: { user: 'sluice', password: '…' },
      },
    ],
  },
);

export const ProviderPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: PLAIN_TEXT })),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    qps: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    config: Type.Optional(ProviderConfig),
    secret: Type.Optional(Type.Union([Secret, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** Query strings are not coerced: `limit` is digits here, its range the service's. */
export const TenantQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'Tenants per page, 1 to 1000; default 100' })),
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "A previous page's `next`" })),
  },
  { additionalProperties: false },
);

/** A route that takes no query parameter refuses one, as a route with a querystring schema refuses one it does not know. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const ProviderQuery = Type.Object(
  { scope: Type.Optional(Type.String({ maxLength: 64 })), channel: Type.Optional(ChannelName) },
  { additionalProperties: false },
);

// ---- Responses: what each route answers, so /docs lists every status with its body. ----

/** What each status of an error means; every error body is {@link ErrorBody}. */
const ERROR_STATUSES = {
  400: 'INVALID_REQUEST: the body, a parameter, a header or the URL is malformed or not allowed',
  401: 'UNAUTHORIZED: the API key or admin token is missing, unknown or revoked',
  403: 'TENANT_SUSPENDED, or BLACKLISTED (sends only)',
  404: 'NOT_FOUND: no such resource, or it belongs to another tenant; every admin route while the admin API is off',
  409: 'CONFLICT: the resource is in a state, or has a name, that forbids the call',
  413: 'PAYLOAD_TOO_LARGE: the body is over SLUICE_BODY_LIMIT_BYTES',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json',
  429: 'RATE_LIMITED, BANNED or QUOTA_EXCEEDED (sends and checks); AUTH_THROTTLED (too many wrong credentials from the address, any authenticated route); Retry-After says when a retry can succeed',
  500: 'INTERNAL: an unexpected failure, logged with the requestId of the body; nothing was accepted',
  503: 'UNAVAILABLE: a dependency is down, or this instance is shutting down; nothing was accepted, retry',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUSES;

/**
 * The error entries of a route's `response` schema. Fastify serialises an error with them too;
 * {@link ErrorBody} keeps every field (`retryAfterSeconds`, `rule`, `field`, `requestId`...).
 */
export function errorResponses(...statuses: ErrorStatus[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {};
  for (const status of [...statuses, 500, 503] as ErrorStatus[]) {
    responses[status] = Type.Object(ErrorBody.properties, {
      description: ERROR_STATUSES[status],
      ...(status === 429
        ? { headers: { 'Retry-After': Type.Integer({ minimum: 1, description: 'Seconds until a retry can succeed (rounded up)' }) } }
        : {}),
    });
  }
  return responses;
}

export const Canceled = Type.Object({ id: Type.String(), status: Type.Literal('canceled') });

export const CreatedTenant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  apiKey: Type.String({ description: 'Shown once, never again' }),
});

export const NewApiKeyQuery = Type.Object(
  {
    keepOthers: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: "true: keep the tenant's other keys working (a rollover); by default they are revoked at once",
      }),
    ),
  },
  { additionalProperties: false },
);

export const KeyParam = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  keyId: Type.String({ minLength: 1, maxLength: 64 }),
});

export const IssuedApiKey = Type.Object({
  keyId: Type.String(),
  apiKey: Type.String({ description: 'Shown once, never again' }),
});

export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeyView) });

export const ApiKeyRevoked = Type.Object({ revoked: Type.Literal(true) });

export const BlacklistAdded = Type.Object({
  added: Type.Array(Type.String(), { description: 'The canonical keys stored (docs/api.md, Recipients)' }),
  invalid: Type.Array(Type.String(), { description: 'Not a recipient of the channel: ignored' }),
});
export const BlacklistRemoved = Type.Object({ removed: Type.Integer(), invalid: Type.Array(Type.String()) });
export const BanLifted = Type.Object({
  lifted: Type.Boolean({ description: 'Whether a ban record was still stored: a ban in force, or (Redis) one that ended moments ago' }),
});

export const LiftBanQuery = Type.Object({
  resetCounts: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description:
        "true: also forget what the recipient's rules have counted, so the sends that led to the ban do not refuse (and ban) the next one",
    }),
  ),
});

export const ProviderList = Type.Object({ providers: Type.Array(ProviderView) });
export const ProviderDeleted = Type.Object({ deleted: Type.Literal(true) });

export const Liveness = Type.Object({ status: Type.Literal('ok') });
export const Readiness = Type.Object({
  status: Type.String({ enum: ['ready', 'not-ready'] }),
  checks: Type.Record(
    Type.String(),
    Type.Object({
      ok: Type.Boolean(),
      detail: Type.Optional(Type.String()),
      warning: Type.Optional(Type.String({ description: 'Something to fix that does not make the instance not ready' })),
    }),
  ),
});

/** An action's name in paths and bodies: letters, digits, `.`, `_`, `-`, `:`. */
const ActionName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._:-]+$' });

export const RiskActionParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), action: ActionName });

/** What PUT .../risk/:action takes; GET's answer can be PUT back (`action`, `version` are read-only). */
export const RiskRuleSetBody = Type.Object(
  {
    action: Type.Optional(ActionName),
    version: Type.Optional(Type.Integer({ minimum: 0 })),
    rules: Type.Array(RiskRuleView, { minItems: 1, maxItems: RISK_LIMITS.rules }),
  },
  { additionalProperties: false },
);

/** An event's dimensions: at most 16, each value at most 256 characters. */
const Dimensions = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: RISK_LIMITS.valueLength }), {
  maxProperties: RISK_LIMITS.dimensions,
  ...KEY,
});

export const RiskCheckBody = Type.Object(
  {
    action: ActionName,
    dimensions: Dimensions,
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    record: Type.Optional(Type.Boolean({ description: 'false: only look, record nothing' })),
  },
  { additionalProperties: false },
);

export const RiskEventBody = Type.Object(
  {
    action: ActionName,
    dimensions: Dimensions,
    outcome: Type.String({ minLength: 1, maxLength: RISK_LIMITS.outcomeLength, description: 'e.g. "failed": counted by last-n rules' }),
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

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
export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookView) });
export const WebhookEventList = Type.Object({ events: Type.Array(WebhookEventView) });
export const WebhookDeleted = Type.Object({ deleted: Type.Literal(true) });

export const ReceiptQuery = Type.Object(
  { token: Type.Optional(Type.String({ maxLength: 128, description: 'The receipt token (or the Sluice-Receipt-Token header)' })) },
  { additionalProperties: false },
);
export const ReceiptBody = Type.Array(Type.Unknown(), { description: "The vendor's push, as it sends it: a JSON array of reports" });
export const VendorAnswer = Type.Record(Type.String(), Type.Unknown(), { description: "The vendor's expected answer" });
export const ReceiptToken = Type.Object({
  token: Type.String({ description: 'Shown once; stored hashed' }),
  path: Type.String({ description: "The receipt URL's path and query, to give the vendor's console after this host" }),
});

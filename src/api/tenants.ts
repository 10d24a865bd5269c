/** Tenants and their API keys (admin token): what the routes take and answer. */
import { type Static, Type } from '@sinclair/typebox';
import type {
  ApiKeyView as ApiKeyViewType,
  CreatedTenantView as CreatedTenantViewType,
  TenantBacklogView as TenantBacklogViewType,
  TenantDetails as TenantDetailsType,
  TenantPage as TenantPageType,
} from '../services/views.js';
import { ChannelName, Iso, Nullable, perChannelObject, stringEnum, TenantStatusName, viewOf } from './common.js';
import { RuleView } from './rules.js';

/**
 * A tenant's quotas are limiter rules (token bucket per second, fixed window per UTC day): a value
 * the limiter refuses (a limit above 1e9) would be stored, then fail every send with a 503. Taken
 * here, one range for create and patch; the CLI checks its bodies against these schemas too.
 */
const QpsLimit = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()], {
  description: 'Requests per second for the whole tenant, 1 to 1,000,000; null: unlimited',
});
/** The tenant's share of the shared delivery pools (docs/operations.md, "Fair delivery"). */
const SendWeight = Type.Integer({
  minimum: 1,
  maximum: 100,
  description:
    "The tenant's share of each shared send pool and provider pace against the other tenants with due messages, 1 to 100; default 1. Weights 3 and 1: three sends for one while both wait",
});
const DailyQuota = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], {
  description: 'Admitted messages per UTC day on this channel, 1 to 1,000,000,000; null: unlimited',
});

export const NewTenantBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9 _.-]*$' }),
    qpsLimit: Type.Optional(QpsLimit),
    sendWeight: Type.Optional(SendWeight),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'acme', qpsLimit: 200, sendWeight: 2 }],
  },
);

export const TenantPatchBody = Type.Object(
  {
    status: Type.Optional(TenantStatusName),
    qpsLimit: Type.Optional(QpsLimit),
    sendWeight: Type.Optional(SendWeight),
    dailyQuotas: Type.Optional(perChannelObject(Type.Optional(DailyQuota), { additionalProperties: false })),
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

export const CreatedTenant = viewOf<CreatedTenantViewType>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    apiKey: Type.String({ description: 'Shown once, never again' }),
    rules: Type.Array(RuleView, {
      description: 'The frequency rules set on its sms and email channels (SLUICE_NEW_TENANT_RULES); empty: none',
    }),
    warnings: Type.Array(Type.String(), {
      description: 'What to know at once, e.g. that with no rules its sends to one recipient are unlimited',
    }),
  }),
);

/** A tenant as the admin API and the CLI show it: its daily quota on every channel (null: unlimited). */
export const TenantDetails = viewOf<TenantDetailsType>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    status: TenantStatusName,
    qpsLimit: Nullable(Type.Integer()),
    sendWeight: Type.Integer({ minimum: 1, maximum: 100, description: "The tenant's share of the shared send pools, 1 to 100" }),
    dailyQuotas: perChannelObject(Nullable(Type.Integer())),
    createdAt: Iso,
  }),
);
export type TenantDetails = Static<typeof TenantDetails>;

/** What waits to be sent on each channel and lane of a tenant: every channel and lane, zeros included. */
export const TenantBacklog = viewOf<TenantBacklogViewType>()(
  Type.Object({
    tenantId: Type.String(),
    at: Type.String({ format: 'date-time', description: 'When it was read: "due" means due at this time' }),
    lanes: Type.Array(
      Type.Object({
        channel: ChannelName,
        lane: stringEnum(['transactional', 'bulk'] as const),
        due: Type.Integer({ description: 'Queued or scheduled, due now: waiting for a send slot or a pace' }),
        scheduledLater: Type.Integer({ description: "Queued or scheduled, due later: a send time, a retry's back-off, quiet hours" }),
        sending: Type.Integer({ description: 'Claimed, in flight' }),
        oldestDue: Nullable(
          Type.Object(
            { id: Type.String(), dueAt: Iso },
            { description: 'The due message that has waited longest (its timeline: GET /v1/admin/tenants/:id/messages/:messageId)' },
          ),
        ),
      }),
    ),
  }),
);
export type TenantBacklog = Static<typeof TenantBacklog>;

/** One page of tenants, ordered by id; `next` is the cursor of the next page, null at the end. */
export const TenantPage = viewOf<TenantPageType>()(
  Type.Object({
    tenants: Type.Array(TenantDetails),
    next: Nullable(Type.String({ description: 'Pass as `after` for the next page; null: the last page' })),
  }),
);
export type TenantPage = Static<typeof TenantPage>;

/** An API key as the admin API lists it: never the key itself. */
export const ApiKeyView = viewOf<ApiKeyViewType>()(
  Type.Object({
    id: Type.String(),
    prefix: Type.String({ description: "The key's first characters, to tell keys apart" }),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
);
export type ApiKeyView = Static<typeof ApiKeyView>;

export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeyView) });

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

export const ApiKeyRevoked = Type.Object({ revoked: Type.Literal(true) });

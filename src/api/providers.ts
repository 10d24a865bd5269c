/** Delivery providers and their credentials (admin token), and the vendors' receipt pushes (a receipt token). */
import { type Static, Type } from '@sinclair/typebox';
import { PROVIDER_KINDS } from '../providers/kinds.js';
import type { ProviderView as ProviderViewType } from '../services/views.js';
import { ChannelName, KEY, PLAIN_TEXT, stringEnum, viewOf } from './common.js';

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

export const ProviderQuery = Type.Object(
  { scope: Type.Optional(Type.String({ maxLength: 64 })), channel: Type.Optional(ChannelName) },
  { additionalProperties: false },
);

/** A provider as the admin API shows it: no secret (only `hasSecret`), times as ISO 8601 like every other view. */
export const ProviderView = viewOf<ProviderViewType>()(
  Type.Object({
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
  }),
);
export type ProviderView = Static<typeof ProviderView>;

export const ProviderList = Type.Object({ providers: Type.Array(ProviderView) });
export const ProviderDeleted = Type.Object({ deleted: Type.Literal(true) });

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

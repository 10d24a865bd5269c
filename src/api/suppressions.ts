/** Suppressions and the consent record: the tenant's own (API key) and any tenant's (admin token), the same bodies and answers. */
import { type Static, Type } from '@sinclair/typebox';
import { CONSENT_SOURCES } from '../core/lifecycle.js';
import type {
  ConsentHistory as ConsentHistoryType,
  ConsentRecordView as ConsentRecordViewType,
  RecipientSuppressions as RecipientSuppressionsType,
  SuppressionPage as SuppressionPageType,
  SuppressionView as SuppressionViewType,
} from '../services/views.js';
import { ChannelName, Iso, Nullable, PLAIN_TEXT, stringEnum, viewOf } from './common.js';

const Category = Type.String({ pattern: '^(\\*|[A-Za-z0-9._:-]{1,64})$', description: 'A send category, or `*` for every one (default)' });
const SourceName = stringEnum(CONSENT_SOURCES);
const Limit = Type.String({ pattern: '^[0-9]{1,9}$', description: 'Entries per page, 1 to 1000; default 100' });
const After = Type.String({ minLength: 1, maxLength: 2048, description: "A previous page's `next`" });

export const RecipientParams = Type.Object({
  channel: ChannelName,
  recipient: Type.String({ minLength: 1, maxLength: 320, description: 'Phone, email address or webhook target, as a send names it' }),
});
export const TenantRecipientParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), ...RecipientParams.properties });

export const SuppressBody = Type.Object(
  {
    category: Type.Optional(Category),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: PLAIN_TEXT, description: 'Default `manual`' })),
  },
  { additionalProperties: false },
);

export const UnsuppressQuery = Type.Object({ category: Type.Optional(Category) }, { additionalProperties: false });

export const SuppressionQuery = Type.Object(
  {
    channel: Type.Optional(ChannelName),
    category: Type.Optional(Category),
    source: Type.Optional(SourceName),
    limit: Type.Optional(Limit),
    after: Type.Optional(After),
  },
  { additionalProperties: false },
);

export const ConsentQuery = Type.Object({ limit: Type.Optional(Limit), after: Type.Optional(After) }, { additionalProperties: false });

export const SuppressionView = viewOf<SuppressionViewType>()(
  Type.Object({
    channel: ChannelName,
    recipient: Type.String({ description: 'The canonical key sends are compared with' }),
    category: Type.String(),
    source: SourceName,
    reason: Nullable(Type.String()),
    createdAt: Iso,
  }),
);
export type SuppressionView = Static<typeof SuppressionView>;

export const RecipientSuppressions = viewOf<RecipientSuppressionsType>()(
  Type.Object({ channel: ChannelName, recipient: Type.String(), suppressed: Type.Boolean(), suppressions: Type.Array(SuppressionView) }),
);
export type RecipientSuppressions = Static<typeof RecipientSuppressions>;

export const SuppressionPage = viewOf<SuppressionPageType>()(
  Type.Object({ entries: Type.Array(SuppressionView), next: Nullable(Type.String()) }),
);
export type SuppressionPage = Static<typeof SuppressionPage>;

export const Suppressed = Type.Object({ suppression: SuppressionView, created: Type.Boolean() });
export const Unsuppressed = Type.Object({ removed: Type.Boolean() });

export const ConsentRecordView = viewOf<ConsentRecordViewType>()(
  Type.Object({
    id: Type.String(),
    channel: ChannelName,
    recipient: Type.String(),
    category: Type.String(),
    action: stringEnum(['suppressed', 'unsuppressed'] as const),
    source: SourceName,
    reason: Nullable(Type.String()),
    evidence: Nullable(Type.Record(Type.String(), Type.Unknown())),
    createdAt: Iso,
  }),
);

export const ConsentHistory = viewOf<ConsentHistoryType>()(
  Type.Object({ channel: ChannelName, recipient: Type.String(), records: Type.Array(ConsentRecordView), next: Nullable(Type.String()) }),
);
export type ConsentHistory = Static<typeof ConsentHistory>;

/** A tenant's blacklist and the global one (admin token): the same bodies and answers for both. */
import { type Static, Type } from '@sinclair/typebox';
import type { BlacklistEntryView as BlacklistEntryViewType, BlacklistPage as BlacklistPageType } from '../services/views.js';
import { CHANNEL_OR_ANY, ChannelOrAny, Iso, Nullable, PLAIN_TEXT, stringEnum, viewOf } from './common.js';

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

/** A blacklist entry: `recipient` is the canonical key (E.164 phone, case-folded email without `+tag`...) sends are compared with. */
export const BlacklistEntryView = viewOf<BlacklistEntryViewType>()(
  Type.Object({
    channel: ChannelOrAny,
    recipient: Type.String(),
    reason: Nullable(Type.String()),
    createdAt: Iso,
  }),
);
export type BlacklistEntryView = Static<typeof BlacklistEntryView>;

/** One page of a blacklist, ordered by (channel, recipient); `next` is the cursor of the next page, null at the end. */
export const BlacklistPage = viewOf<BlacklistPageType>()(
  Type.Object({
    entries: Type.Array(BlacklistEntryView),
    next: Nullable(Type.String({ description: 'Pass as `after` for the next page; null: the last page' })),
  }),
);
export type BlacklistPage = Static<typeof BlacklistPage>;

export const BlacklistAdded = Type.Object({
  added: Type.Array(Type.String(), { description: 'The canonical keys stored (docs/api.md, Recipients)' }),
  invalid: Type.Array(Type.String(), { description: 'Not a recipient of the channel: ignored' }),
});

export const BlacklistRemoved = Type.Object({ removed: Type.Integer(), invalid: Type.Array(Type.String()) });

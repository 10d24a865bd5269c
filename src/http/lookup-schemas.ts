/** Request schemas of the admin lookups: message search and detail, the ban peek, the rules dry run (TypeBox: validation and /docs). */
import { Type } from '@sinclair/typebox';
import { MAX_RECIPIENT_LENGTH } from '../core/recipients.js';
import { SEARCH_LIMITS } from '../services/admin-lookup-service.js';
import { MAX_PREVIEW_SENDS } from '../services/rules-preview.js';
import { ChannelName, MessageStatusName } from '../services/views.js';
import { RuleBody } from './schemas.js';

/** Query strings are not coerced: `limit` is digits here, its range the service's. */
export const MessageSearchQuery = Type.Object(
  {
    to: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_RECIPIENT_LENGTH,
        description:
          'The recipient, in any spelling a send accepts: normalised as admission normalises it, then matched exactly. Absent: every message of the tenant (`channel` and `status` then are refused)',
      }),
    ),
    channel: Type.Optional(ChannelName),
    status: Type.Optional(MessageStatusName),
    limit: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,9}$',
        description: `Messages per page, 1 to ${SEARCH_LIMITS.max}; default ${SEARCH_LIMITS.default}`,
      }),
    ),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "A previous page's `nextCursor`" })),
  },
  { additionalProperties: false },
);

export const MessageParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  messageId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** 400 days, the longest window or ban: an offset beyond it meets nothing earlier. */
const MAX_OFFSET_MS = 400 * 86_400_000;

export const RulesPreviewBody = Type.Object(
  {
    rules: Type.Optional(
      Type.Array(RuleBody, {
        maxItems: 16,
        description: "The rules to try, as PUT .../rules/:channel takes them; absent: the channel's stored rules",
      }),
    ),
    sends: Type.Array(
      Type.Object(
        { atMs: Type.Integer({ minimum: 0, maximum: MAX_OFFSET_MS, description: 'Milliseconds after the first send' }) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_PREVIEW_SENDS, description: 'Sends to one recipient, in order (offsets not decreasing)' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }],
        sends: [{ atMs: 0 }, { atMs: 1 }, { atMs: 2 }, { atMs: 3 }, { atMs: 60_000 }],
      },
    ],
  },
);

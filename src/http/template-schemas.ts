/** Request and response schemas of templates, quiet hours and batch sends (TypeBox: validation and /docs). */
import { Type } from '@sinclair/typebox';
import { PRIORITIES } from '../admission/context.js';
import { PARAM_VALUE_LIMIT } from '../admission/template-patterns.js';
import { CONTENT_LIMITS, TEMPLATE_NAME } from '../admission/templates.js';
import { CHANNELS } from '../core/channels.js';
import { ChannelName, stringEnum } from '../services/views.js';
import { SendBody } from './schemas.js';

const KEY = { propertyNames: { maxLength: 64 } };

export const TemplateParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  channel: ChannelName,
  name: Type.String({ pattern: TEMPLATE_NAME, description: 'Letters, digits, `_`, `.`, `-`' }),
});

const ParamSpec = Type.Object(
  {
    type: stringEnum(['string', 'number'] as const),
    maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: PARAM_VALUE_LIMIT })),
    pattern: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          'A regular expression (unanchored, as JSON Schema: use ^…$), matched by RE2 in linear time: no lookaround, no backreferences',
      }),
    ),
  },
  { additionalProperties: false },
);

const VendorSpec = Type.Object(
  {
    templateCode: Type.String({ minLength: 1, maxLength: 128, description: 'Aliyun TemplateCode, Tencent TemplateId' }),
    signName: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    paramOrder: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: 50,
        description: 'Positional vendors (Tencent): the params in placeholder order',
      }),
    ),
  },
  { additionalProperties: Type.Union([Type.String({ maxLength: 256 }), Type.Number(), Type.Boolean()]) },
);

export const TemplateBody = Type.Object(
  {
    params: Type.Record(Type.String({ maxLength: 64 }), ParamSpec, { maxProperties: 50, ...KEY }),
    body: Type.Optional(Type.String({ maxLength: CONTENT_LIMITS.body })),
    subject: Type.Optional(Type.String({ maxLength: CONTENT_LIMITS.subject })),
    html: Type.Optional(
      Type.String({
        maxLength: CONTENT_LIMITS.html,
        description: 'HTML-escaped: {{name}} only, no {{{name}}}, {{& name}} or delimiter change',
      }),
    ),
    vendor: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), VendorSpec, {
        maxProperties: 20,
        ...KEY,
        description: "SMS: per provider id or kind (`aliyun-sms`), that vendor's approved template and sign",
      }),
    ),
  },
  { additionalProperties: false },
);

export const TemplateVersionView = Type.Object({
  channel: ChannelName,
  name: Type.String(),
  version: Type.Integer(),
  params: TemplateBody.properties.params,
  body: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  vendor: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
  createdAt: Type.String(),
  retiredAt: Type.Union([Type.String(), Type.Null()]),
});

export const TemplateList = Type.Object({ templates: Type.Array(TemplateVersionView) });
export const TemplateVersions = Type.Object({ versions: Type.Array(TemplateVersionView) });
export const TemplateListQuery = Type.Object({ channel: Type.Optional(stringEnum(CHANNELS)) }, { additionalProperties: false });
export const Retired = Type.Object({ channel: ChannelName, name: Type.String(), retired: Type.Literal(true) });

export const QuietHoursBody = Type.Object(
  {
    timeZone: Type.String({ minLength: 1, maxLength: 64, description: 'An IANA zone, e.g. Asia/Shanghai' }),
    windows: Type.Array(
      Type.Object(
        { from: Type.String({ pattern: '^\\d\\d:\\d\\d$' }), to: Type.String({ pattern: '^\\d\\d:\\d\\d$' }) },
        { additionalProperties: false, description: 'Local HH:MM; from later than to crosses midnight' },
      ),
      { maxItems: 8 },
    ),
    applies: stringEnum(['bulk', 'all'] as const, { description: 'bulk: only bulk messages wait; all: every message' }),
  },
  { additionalProperties: false },
);
export const QuietHoursView = Type.Object({ channel: ChannelName, ...QuietHoursBody.properties });
export const QuietHoursRemoved = Type.Object({ channel: ChannelName, removed: Type.Literal(true) });

/** Most messages one batch carries. */
export const MAX_BATCH = 1000;

const Priority = stringEnum(PRIORITIES, { description: 'transactional (default for single sends) goes before bulk (default in batches)' });

/** A campaign's recipient: its fields are a send's, so its errors read as a single send's would. */
export const Recipient = Type.Object({ to: SendBody.properties.to, params: SendBody.properties.params }, { additionalProperties: false });

const CAMPAIGN = {
  additionalProperties: false,
  description: 'A campaign: one template to many recipients, each with its own params over the shared ones',
} as const;

/** The campaign's shared fields, checked with the envelope (a bad one would fail every message). */
const campaignFields = {
  channel: SendBody.properties.channel,
  template: Type.String({ minLength: 1, maxLength: 128 }),
  params: SendBody.properties.params,
  sendAt: SendBody.properties.sendAt,
  priority: Type.Optional(Priority),
};

const BATCH_ITEMS = { minItems: 1, maxItems: MAX_BATCH };

/**
 * What the batch route validates as a whole: the form, the campaign's shared fields, the list's
 * bounds. Each message (a {@link SendBody}) or recipient ({@link Recipient}) is validated on its
 * own, so one malformed message is refused in its result, not the batch.
 */
export const BatchEnvelope = Type.Union([
  Type.Object({ messages: Type.Array(Type.Unknown(), BATCH_ITEMS) }, { additionalProperties: false }),
  Type.Object({ ...campaignFields, recipients: Type.Array(Type.Unknown(), BATCH_ITEMS) }, CAMPAIGN),
]);

/** The batch body as /docs shows it: the envelope with what each message must be. */
export const BatchBody = Type.Union([
  Type.Object(
    {
      messages: Type.Array(
        Type.Object({ ...SendBody.properties, priority: Type.Optional(Priority) }, { additionalProperties: false }),
        BATCH_ITEMS,
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object({ ...campaignFields, recipients: Type.Array(Recipient, BATCH_ITEMS) }, CAMPAIGN),
]);

export const BatchResults = Type.Object({
  results: Type.Array(
    Type.Object({
      index: Type.Integer(),
      id: Type.Optional(Type.String()),
      status: Type.Optional(Type.String()),
      dueAt: Type.Optional(Type.String()),
      deferredBy: Type.Optional(Type.String()),
      replayed: Type.Optional(Type.Boolean()),
      error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true })),
    }),
  ),
});

/** Templates and quiet hours of a tenant channel (admin token). */
import { type Static, Type } from '@sinclair/typebox';
import { PARAM_VALUE_LIMIT } from '../admission/template-patterns.js';
import { CONTENT_LIMITS, TEMPLATE_NAME } from '../admission/templates.js';
import { CHANNELS } from '../core/channels.js';
import type { QuietHoursView as QuietHoursViewType, TemplateVersionView as TemplateVersionViewType } from '../services/views.js';
import { ChannelName, KEY, stringEnum, viewOf } from './common.js';

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

export const TemplateVersionView = viewOf<TemplateVersionViewType>()(
  Type.Object({
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
  }),
);
export type TemplateVersionView = Static<typeof TemplateVersionView>;

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
export const QuietHoursView = viewOf<QuietHoursViewType>()(Type.Object({ channel: ChannelName, ...QuietHoursBody.properties }));
export type QuietHoursView = Static<typeof QuietHoursView>;
export const QuietHoursRemoved = Type.Object({ channel: ChannelName, removed: Type.Literal(true) });

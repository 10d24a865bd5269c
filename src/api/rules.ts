/** A tenant channel's frequency rules and its fallback while Redis is away (admin token). */
import { type Static, Type } from '@sinclair/typebox';
import { CHANNELS } from '../core/channels.js';
import { ALGORITHMS, FALLBACK_MODES } from '../limiter/index.js';
import type { FallbackView as FallbackViewType, RuleSetView as RuleSetViewType, RuleView as RuleViewType } from '../services/views.js';
import { ChannelName, Nullable, stringEnum, viewOf } from './common.js';

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

/** A frequency rule as the admin API and the CLI write and read it (seconds). */
export const RuleView = viewOf<RuleViewType>()(
  Type.Object({
    windowSeconds: Type.Integer(),
    limit: Type.Integer(),
    banSeconds: Type.Integer(),
    algorithm: Type.Optional(Type.String()),
  }),
);
export type RuleView = Static<typeof RuleView>;

/** A tenant channel's fallback while Redis is slow or down; only `static` has rules of its own. */
export const FallbackView = viewOf<FallbackViewType>()(
  Type.Object({ mode: stringEnum(FALLBACK_MODES), rules: Type.Optional(Type.Array(RuleView)) }),
);
export type FallbackView = Static<typeof FallbackView>;

/**
 * A tenant channel's rule set, in the shape `PUT .../rules/:channel` takes (plus `channel` and
 * `version`): what GET answers can be PUT back as it is.
 */
export const RuleSetView = viewOf<RuleSetViewType>()(
  Type.Object(
    {
      channel: ChannelName,
      rules: Type.Array(RuleView),
      fallback: Nullable(FallbackView),
      version: Type.Integer({ description: 'Bumped by every PUT; 0: never set' }),
    },
    { description: 'The shape PUT takes: it can be PUT back as it is' },
  ),
);
export type RuleSetView = Static<typeof RuleSetView>;

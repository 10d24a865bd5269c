/**
 * Risk control on stored rule sets: the rule sets (admin token), and `POST /v1/risk/check` and
 * `/v1/risk/events` (tenant API key), which judge and record events by their action's set.
 */
import { type Static, Type } from '@sinclair/typebox';
import { ALGORITHMS, RISK_EFFECTS, RISK_LIMITS, RISK_MODES, RISK_RULE_KINDS } from '../limiter/index.js';
import type {
  RiskDecisionView as RiskDecisionViewType,
  RiskRuleSetView as RiskRuleSetViewType,
  RiskRuleView as RiskRuleViewType,
} from '../services/views.js';
import { KEY, stringEnum, viewOf } from './common.js';

const MAX_WINDOW_SECONDS = RISK_LIMITS.windowMs / 1000;
const DimensionName = Type.String({ minLength: 1, maxLength: RISK_LIMITS.nameLength });

/**
 * A risk rule as the admin API and the CLI write and read it (seconds). One object for every
 * kind: which parameters a kind needs is checked by the service (`normalizeRiskRules`), which
 * names the missing field; here are the types and bounds.
 */
export const RiskRuleView = viewOf<RiskRuleViewType>()(
  Type.Object(
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
      outcome: Type.Optional(
        Type.String({ minLength: 1, maxLength: RISK_LIMITS.outcomeLength, description: 'last-n: the outcome counted' }),
      ),
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
      falsePositiveRate: Type.Optional(
        Type.Number({ minimum: 1e-9, maximum: 0.5, description: 'seen: bound at capacity (default 0.001)' }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type RiskRuleView = Static<typeof RiskRuleView>;

/** An action's risk rule set, in the shape `PUT .../risk/:action` takes (plus `action` and `version`). */
export const RiskRuleSetView = viewOf<RiskRuleSetViewType>()(
  Type.Object({
    action: Type.String(),
    rules: Type.Array(RiskRuleView),
    version: Type.Integer({ description: 'Bumped by every PUT' }),
  }),
);
export type RiskRuleSetView = Static<typeof RiskRuleSetView>;

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

/** One rule that fired in a risk check. */
const RiskReasonView = Type.Object({
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
export const RiskDecisionView = viewOf<RiskDecisionViewType>()(
  Type.Object({
    allowed: Type.Boolean({ description: 'false only for decision deny' }),
    decision: stringEnum(['allow', 'review', 'deny'] as const),
    reasons: Type.Array(RiskReasonView),
    degraded: Type.Optional(Type.Boolean({ description: 'Redis could not answer: the fallback mode decided (docs/degradation.md)' })),
  }),
);
export type RiskDecisionView = Static<typeof RiskDecisionView>;

/** The answer of `POST /v1/risk/events` (202). */
export const RiskEventRecorded = Type.Object({
  recorded: Type.Boolean(),
  duplicate: Type.Optional(Type.Boolean({ description: 'a repeat of the requestId: nothing recorded' })),
  skipped: Type.Optional(
    Type.Array(Type.String(), {
      description: "The set's last-n, distinct and seen rules the event could not feed: it lacks a dimension of their key or `of`",
    }),
  ),
  degraded: Type.Optional(Type.Boolean()),
});

/** `POST /v1/frequency/check` (tenant API key): a limiter decision on any subject, with the caller's rules. */
import { Type } from '@sinclair/typebox';
import { FALLBACK_MODES } from '../limiter/index.js';
import { stringEnum } from './common.js';
import { RuleBody } from './rules.js';

/**
 * A frequency check's rule: the tenant's own, so held closer than the rules an operator sets. What
 * a tenant can make the limiter keep is its checks per second over the longest window: 31 days.
 */
const CheckRuleBody = Type.Object(
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
    rules: Type.Array(CheckRuleBody, { minItems: 1, maxItems: 16 }),
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

/** The limiter's decision, as the check answers it. */
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

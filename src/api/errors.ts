/** The error body every route answers with, and what each error status means (docs/errors.md has the codes). */
import { type TSchema, Type } from '@sinclair/typebox';

export const ErrorBody = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true }),
});

/** What each status of an error means; every error body is {@link ErrorBody}. */
const ERROR_STATUSES = {
  400: 'INVALID_REQUEST: the body, a parameter, a header or the URL is malformed or not allowed',
  401: 'UNAUTHORIZED: the API key or admin token is missing, unknown or revoked',
  403: 'TENANT_SUSPENDED, or BLACKLISTED (sends only)',
  404: 'NOT_FOUND: no such resource, or it belongs to another tenant; every admin route while the admin API is off',
  409: 'CONFLICT: the resource is in a state, or has a name, that forbids the call',
  413: 'PAYLOAD_TOO_LARGE: the body is over SLUICE_BODY_LIMIT_BYTES',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json',
  429: 'RATE_LIMITED, BANNED or QUOTA_EXCEEDED (sends and checks); AUTH_THROTTLED (too many wrong credentials from the address, any authenticated route); Retry-After says when a retry can succeed',
  500: 'INTERNAL: an unexpected failure, logged with the requestId of the body; nothing was accepted',
  503: 'UNAVAILABLE: a dependency is down, or this instance is shutting down; nothing was accepted, retry',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUSES;

/**
 * The error entries of a route's `response` schema. Fastify serialises an error with them too;
 * {@link ErrorBody} keeps every field (`retryAfterSeconds`, `rule`, `field`, `requestId`...).
 */
export function errorResponses(...statuses: ErrorStatus[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {};
  for (const status of [...statuses, 500, 503] as ErrorStatus[]) {
    responses[status] = Type.Object(ErrorBody.properties, {
      description: ERROR_STATUSES[status],
      ...(status === 429
        ? { headers: { 'Retry-After': Type.Integer({ minimum: 1, description: 'Seconds until a retry can succeed (rounded up)' }) } }
        : {}),
    });
  }
  return responses;
}

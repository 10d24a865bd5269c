/** What every admin route's schema shares: the admin token, the errors every admin route can answer. */
import type { TSchema } from '@sinclair/typebox';
import { NoQuery } from '../api/common.js';
import { type ErrorStatus, errorResponses } from '../api/errors.js';
import { SECURITY } from '../api/operations.js';

/**
 * An admin route's schema: the admin token, and the errors every admin route can answer (401; 404
 * while the admin API is off), those of its inputs (400 for parameters, query or body, and for a
 * query parameter the route does not take; 413 and 415 for a body) and `conflicts` (409), beside
 * its success responses.
 */
export function adminSchema<T extends { params?: TSchema; querystring?: TSchema; body?: TSchema }>(
  summary: string,
  inputs: T,
  success: Record<number, TSchema>,
  options: { conflicts?: boolean } = {},
) {
  // Every admin route validates its query string, an empty one at least: 400 for any parameter.
  // 429: AUTH_THROTTLED, an address past its wrong-credential limit.
  const statuses: ErrorStatus[] = [400, 401, 404, 429];
  if (inputs.body) statuses.push(413, 415);
  if (options.conflicts) statuses.push(409);
  return {
    summary,
    security: SECURITY.admin,
    ...inputs,
    querystring: (inputs.querystring ?? NoQuery) as T['querystring'] extends TSchema ? T['querystring'] : typeof NoQuery,
    response: { ...errorResponses(...statuses), ...success },
  };
}

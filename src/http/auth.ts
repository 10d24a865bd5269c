import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { TenantView } from '../admission/context.js';
import { SluiceError } from '../core/errors.js';
import type { HttpDeps } from './deps.js';

/** The last header read and its token: a send reads it twice (its hook and its handler), a client sends the same one again and again. */
let lastHeader: string | undefined;
let lastToken: string | undefined;

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  if (header === lastHeader) return lastToken;
  const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  lastHeader = header;
  lastToken = token;
  return token;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Compares in constant time (over hashes, so lengths leak nothing either). */
export function safeEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

const tenants = new WeakMap<FastifyRequest, TenantView>();

type Realm = 'admin' | 'tenant';

/**
 * AUTH_THROTTLED when the client's address is over its failure limit: before the credential is
 * checked, so a guesser past the limit learns nothing, and costs no lookup.
 */
function refuseThrottled(deps: HttpDeps, request: FastifyRequest, realm: Realm): void {
  const blockedMs = deps.authFailures?.blockedFor(request.ip) ?? 0;
  if (blockedMs <= 0) return;
  deps.metrics?.observeAuthFailure?.(realm, 'throttled');
  throw new SluiceError('AUTH_THROTTLED', 'too many wrong credentials from this address; retry after Retry-After', {
    retryAfterMs: blockedMs,
  });
}

/** Counts a refused credential: a wrong one against the client's address, a missing one only in the metric. */
async function refused(deps: HttpDeps, request: FastifyRequest, realm: Realm, token: string | undefined): Promise<void> {
  deps.metrics?.observeAuthFailure?.(realm, token === undefined ? 'missing' : 'wrong');
  if (token !== undefined) await deps.authFailures?.failed(request.ip);
}

/**
 * An `onRequest` hook for the tenant routes: the API key is checked before the body is read or
 * validated, so a request without a valid key is a 401 whatever its body (and an unauthenticated
 * caller learns nothing of the schema); an address over its failure limit is a 429 before that.
 * {@link tenantOf} then gives the handler its tenant. A send still goes through the chain's own
 * auth step with the key, once its body is in: the tenant's status is read then, not before a
 * slow upload.
 */
export function authenticateTenant(deps: HttpDeps, options: { send?: boolean } = {}) {
  return async (request: FastifyRequest): Promise<void> => {
    refuseThrottled(deps, request, 'tenant');
    const token = bearerToken(request);
    const tenant = await deps.authenticate(token);
    if (!tenant) {
      if (options.send) deps.metrics?.observeAdmissionRejection?.('auth', 'UNAUTHORIZED');
      await refused(deps, request, 'tenant', token);
      throw new SluiceError('UNAUTHORIZED', 'a valid API key is required: Authorization: Bearer <key>');
    }
    tenants.set(request, tenant);
  };
}

/** The tenant {@link authenticateTenant} found for this request. */
export function tenantOf(request: FastifyRequest): TenantView {
  const tenant = tenants.get(request);
  if (!tenant) throw new Error('tenantOf: the route has no authenticateTenant hook');
  return tenant;
}

/** The admin routes' `onRequest` check: NOT_FOUND while the admin API is off, then as {@link authenticateTenant}. */
export async function requireAdmin(deps: HttpDeps, request: FastifyRequest): Promise<void> {
  if (!deps.adminToken) throw new SluiceError('NOT_FOUND', 'the admin API is off: set SLUICE_ADMIN_TOKEN to enable it');
  refuseThrottled(deps, request, 'admin');
  const token = bearerToken(request);
  if (!token || !safeEqual(token, deps.adminToken)) {
    await refused(deps, request, 'admin', token);
    throw new SluiceError('UNAUTHORIZED', 'the admin token is required: Authorization: Bearer <SLUICE_ADMIN_TOKEN>');
  }
}

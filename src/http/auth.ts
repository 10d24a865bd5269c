import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { TenantView } from '../admission/context.js';
import type { HttpDeps } from '../app/contracts.js';
import { SluiceError } from '../errors.js';

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Compares in constant time (over hashes, so lengths leak nothing either). */
export function safeEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

export async function requireTenant(deps: HttpDeps, request: FastifyRequest): Promise<TenantView> {
  const tenant = await deps.authenticate(bearerToken(request));
  if (!tenant) throw new SluiceError('UNAUTHORIZED', 'a valid API key is required: Authorization: Bearer <key>');
  return tenant;
}

export function requireAdmin(deps: HttpDeps, request: FastifyRequest): void {
  const token = bearerToken(request);
  if (!deps.adminToken) throw new SluiceError('NOT_FOUND', 'the admin API is off: set SLUICE_ADMIN_TOKEN to enable it');
  if (!token || !safeEqual(token, deps.adminToken))
    throw new SluiceError('UNAUTHORIZED', 'the admin token is required: Authorization: Bearer <SLUICE_ADMIN_TOKEN>');
}

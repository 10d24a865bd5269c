/**
 * What the HTTP app gets from the runtime: the services, tenant authentication, the HTTP settings
 * it applies, and the failure limit on credentials (counted in Redis when there is one, so every
 * instance counts into the same log per address).
 */
import type { Logger } from 'pino';
import type { CachedTenantDirectory } from '../admission/adapters/tenant-directory.js';
import { unavailableUnlessSluiceError } from '../core/errors.js';
import { AddressFailureLimit } from '../http/auth-failures.js';
import type { HttpDeps } from '../http/deps.js';
import { ThrottledLog } from '../infra/throttled-log.js';
import type { Clock, Limiter } from '../limiter/index.js';
import type { Metrics } from '../metrics/index.js';
import type { Services } from '../services/contracts.js';
import { type Settings, trustProxyOption } from '../settings/schema.js';

export interface HttpDepsInput {
  settings: Settings;
  services: Services;
  directory: CachedTenantDirectory;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
  /** The limiter every instance shares, when there is one: failures are counted there. */
  sharedLimiter: Limiter | undefined;
}

export function httpDeps({ settings, services, directory, metrics, clock, logger, sharedLimiter }: HttpDepsInput): HttpDeps {
  const storeErrors = new ThrottledLog<{ err: unknown }>(
    (fields) => logger.warn(fields, 'a wrong credential could not be counted against its address (Redis); it was refused all the same'),
    clock,
  );
  return {
    ...services,
    authenticate: async (apiKey) => (apiKey ? directory.tenantByApiKey(apiKey).catch(unavailableUnlessSluiceError) : undefined),
    metrics: metrics.httpEndpoint(),
    adminToken: settings.adminToken,
    bodyLimitBytes: settings.bodyLimitBytes,
    requestTimeoutMs: settings.httpRequestTimeoutMs,
    maxConnections: settings.httpMaxConnections,
    maxConnectionsPerIp: settings.httpMaxConnectionsPerIp,
    trustProxy: trustProxyOption(settings.trustProxy),
    ...(settings.authFailureLimit > 0
      ? {
          authFailures: new AddressFailureLimit({
            limit: settings.authFailureLimit,
            windowMs: settings.authFailureWindowMs,
            clock,
            ...(sharedLimiter ? { limiter: sharedLimiter } : {}),
            onStoreError: (error) => storeErrors.record({ err: error }),
          }),
        }
      : {}),
    logLevel: settings.logLevel,
    logger,
    console: settings.console,
  };
}

/**
 * A running sluice: the roles its settings ask for (the API with its due feed, the dispatchers,
 * or both) over one runtime, started in the order that cannot leave a worker behind a server that
 * never came up, and stopped in the order that leaves nothing in progress to meet a closed
 * dependency.
 */

import type { Logger } from 'pino';
import type { Delivery } from '../delivery/delivery.js';
import type { HttpDeps } from '../http/deps.js';
import type { Provider } from '../providers/provider.js';
import type { Services } from '../services/contracts.js';
import { type Settings, unknownVariables } from '../settings/settings.js';
import { type HttpRole, startHttp } from './api.js';
import type { Backend } from './backend/backend.js';
import { type DemoOptions, serveRuntime } from './demo-runtime.js';
import { type DueFeed, dueFeedDeps, startDueFeed } from './due-feed.js';
import { keepLimiterSnapshots, type LimiterSnapshots } from './limiter-snapshots.js';
import type { Runtime } from './runtime.js';
import { keepTenantBacklogGauge, type TenantBacklogGauge } from './tenant-backlog-gauge.js';
import { startWorker } from './worker.js';

/** Below this, the start warns that the admin token could be guessed. */
const MIN_ADMIN_TOKEN_LENGTH = 24;

export interface Service {
  /** The address the HTTP server listens on (`http://host:port`). */
  readonly address: string;
  /** Whether this instance serves the API (else its probes and metrics only). */
  readonly servesApi: boolean;
  /** What the entry points call (the demo creates its tenant through them). */
  readonly services: Services;
  readonly logger: Logger;
  /** The database, credentials hidden, and what backs the shared state: for the start's log line. */
  readonly description: { db: string; backend: Backend['kind'] };
  /**
   * Stops: the HTTP server stops answering and the handlers still running finish (bounded by
   * `SLUICE_SHUTDOWN_TIMEOUT_MS`); the dispatchers stop (their sends in flight finish, their
   * waiting claims go back); the feed indexes the last accepts; the embedded limiter's state is
   * saved; then the runtime drains the group commit and closes the backend and the database.
   */
  stop(): Promise<void>;
}

export interface RolesOptions {
  /** Serves the embedded default's tenant channels while no provider is stored. */
  fallbackProvider: Provider;
  /** What the routes call; `runtime.http` unless given. */
  http?: HttpDeps;
}

/** `sluice serve`: a runtime from `settings` (see {@link serveRuntime} for `--demo`), and its roles started. */
export async function startService(settings: Settings, options: RolesOptions & DemoOptions): Promise<Service> {
  return startRoles(await serveRuntime(settings, options), options);
}

/** Starts the roles of `runtime.settings.roles` on `runtime`, which it then owns (a failed start closes it). */
export async function startRoles(runtime: Runtime, options: RolesOptions): Promise<Service> {
  const { settings, logger, backend } = runtime;
  for (const name of unknownVariables()) logger.warn({ variable: name }, 'not a sluice setting: ignored (docs/configuration.md)');
  // The admin token is a password: a short one can be guessed, however slowly failures are let through.
  if (settings.adminToken && settings.adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    logger.warn(
      { length: settings.adminToken.length },
      `SLUICE_ADMIN_TOKEN is short: use at least ${MIN_ADMIN_TOKEN_LENGTH} random characters (openssl rand -base64 32)`,
    );
  }
  for (const warning of await backend.startupWarnings(runtime.database.dialect !== 'sqlite'))
    logger.warn({ backend: backend.kind }, warning);
  await runtime.warmUp();
  // Before the first decision: a ban saved before a restart holds from the first request on. Only
  // an instance serving the API decides on recipients; a worker's save would replace its snapshot.
  const snapshots: LimiterSnapshots | undefined = settings.roles.includes('api') ? await keepLimiterSnapshots(runtime) : undefined;
  runtime.metrics.setMessageCounts(() => runtime.repositories.messages.countOpen());

  // Listen before starting the dispatchers: a port in use must end the process, not leave a
  // worker running behind a server that never came up. A worker-only instance serves its probes
  // and metrics (the delivery metrics exist only on workers).
  const servesApi = settings.roles.includes('api');
  const runsWorker = settings.roles.includes('worker');
  let http: HttpRole;
  try {
    http = await startHttp({ http: options.http ?? runtime.http, settings, logger, routes: servesApi ? 'all' : 'operations' });
  } catch (error) {
    await snapshots?.close({ save: false });
    await runtime.close();
    throw error;
  }
  // The feed hands what this instance accepts to the dispatchers (here, or on another instance);
  // a worker-only instance starts its own, which wakes its dispatchers for what others accept.
  const feed: DueFeed | undefined = servesApi ? startDueFeed(dueFeedDeps(runtime)) : undefined;
  const delivery: Delivery | undefined = runsWorker ? startWorker(runtime, options.fallbackProvider, feed ? { feed } : {}) : undefined;
  // The delivery metrics exist only on workers: so does the backlog by tenant (one query per 15 s per worker).
  const backlogGauge: TenantBacklogGauge | undefined = runsWorker ? keepTenantBacklogGauge(runtime) : undefined;
  let stopped: Promise<void> | undefined;
  return {
    address: http.address,
    servesApi,
    services: runtime.services,
    logger,
    description: { db: runtime.database.displayUrl, backend: backend.kind },
    stop() {
      stopped ??= (async () => {
        const started = performance.now();
        await http.close();
        await backlogGauge?.close();
        await delivery?.stop();
        await feed?.close();
        await snapshots?.close();
        await runtime.close();
        // The HTTP part keeps to the timeout; a dispatcher's send in flight is bounded by its provider's.
        const stop = { elapsedMs: Math.round(performance.now() - started), timeoutMs: settings.shutdownTimeoutMs };
        if (stop.elapsedMs <= stop.timeoutMs) logger.info(stop, 'sluice stopped');
        else
          logger.warn(stop, 'sluice stopped, after SLUICE_SHUTDOWN_TIMEOUT_MS (a send in flight to a provider is bounded by its timeout)');
      })();
      return stopped;
    },
  };
}

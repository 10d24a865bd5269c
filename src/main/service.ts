/**
 * A running sluice: the roles its settings ask for (the API with its due feed, the dispatchers,
 * or both) over one runtime, started in the order that cannot leave a worker behind a server that
 * never came up, and stopped in the order that leaves nothing in progress to meet a closed
 * dependency.
 */
import { type Delivery, startDelivery } from '../delivery/delivery.js';
import type { Provider } from '../providers/provider.js';
import type { HttpDeps } from '../services/contracts.js';
import { unknownVariables } from '../settings/settings.js';
import { type HttpRole, startHttp } from './api.js';
import { type DueFeed, startDueFeed } from './due-feed.js';
import type { Runtime } from './runtime.js';
import { deliveryDeps } from './worker.js';

/** Below this, the start warns that the admin token could be guessed. */
const MIN_ADMIN_TOKEN_LENGTH = 24;

export interface Service {
  /** The address the HTTP server listens on (`http://host:port`). */
  readonly address: string;
  /** Whether this instance serves the API (else its probes and metrics only). */
  readonly servesApi: boolean;
  /**
   * Stops: the HTTP server stops answering and the handlers still running finish (bounded by
   * `SLUICE_SHUTDOWN_TIMEOUT_MS`); the dispatchers stop (their sends in flight finish, their
   * waiting claims go back); the feed indexes the last accepts; then the runtime drains the group
   * commit and closes the backend and the database.
   */
  stop(): Promise<void>;
}

/** The due feed's deps from a runtime: its accepted messages, the backend's due index and wake bus. */
export const dueFeedDeps = (runtime: Runtime) => ({
  settings: runtime.settings,
  clock: runtime.clock,
  logger: runtime.logger,
  onAccepted: runtime.onAccepted,
  dueIndex: runtime.backend.dueIndex,
  wakeBus: runtime.backend.wakeBus,
});

export interface ServiceOptions {
  /** Serves the embedded default's tenant channels while no provider is stored. */
  fallbackProvider: Provider;
  /** What the routes call; `runtime.http` unless given. */
  http?: HttpDeps;
}

/** Starts the roles of `runtime.settings.roles` on `runtime`, which it then owns (a failed start closes it). */
export async function startService(runtime: Runtime, options: ServiceOptions): Promise<Service> {
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
  await backend.warmUp();
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
    await runtime.close();
    throw error;
  }
  // The feed hands what this instance accepts to the dispatchers; a worker-only instance has its
  // own, which wakes its dispatchers for what the API instances accept.
  const feed: DueFeed | undefined = servesApi || runsWorker ? startDueFeed(dueFeedDeps(runtime)) : undefined;
  const delivery: Delivery | undefined = runsWorker && feed ? startDelivery(deliveryDeps(runtime, options.fallbackProvider, feed)) : undefined;
  let stopped: Promise<void> | undefined;
  return {
    address: http.address,
    servesApi,
    stop() {
      stopped ??= (async () => {
        await http.close();
        await delivery?.stop();
        await feed?.close();
        await runtime.close();
      })();
      return stopped;
    },
  };
}

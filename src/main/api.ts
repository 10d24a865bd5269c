/**
 * The API role: the HTTP app on its address, with every route or (a worker-only instance) its
 * probes and metrics only. What it accepts reaches the dispatchers through the due feed, which
 * the service starts beside it (`service.ts`).
 */
import type { Logger } from 'pino';
import { buildHttpApp } from '../http/app.js';
import type { HttpDeps } from '../http/deps.js';
import { RequestsInProgress } from '../http/requests-in-progress.js';
import type { Settings } from '../settings/settings.js';

export interface HttpRole {
  /** The address the server listens on (`http://host:port`). */
  readonly address: string;
  /**
   * Stops answering, then waits for the requests still in progress, those whose clients hung up
   * included, and for their connections to end (each answer from now on carries `Connection:
   * close`), all within `SLUICE_SHUTDOWN_TIMEOUT_MS`; what is open after it is closed under its
   * client. After it, no handler uses Redis or the database, and each message a handler admitted
   * is stored or its admission undone.
   */
  close(): Promise<void>;
}

export interface HttpRoleDeps {
  /** What the routes call. */
  http: HttpDeps;
  settings: Pick<Settings, 'host' | 'port' | 'shutdownTimeoutMs'>;
  logger: Logger;
  /** `all`: the API; `operations`: `/healthz`, `/readyz` and `/metrics` only. */
  routes: 'all' | 'operations';
}

/** Listens on `SLUICE_HOST:SLUICE_PORT`. A port in use rejects with a readable reason, after closing what it opened. */
export async function startHttp({ http, settings, logger, routes }: HttpRoleDeps): Promise<HttpRole> {
  const inProgress = new RequestsInProgress();
  const app = await buildHttpApp(http, { routes, inProgress });
  // The whole close keeps to one deadline: the requests in progress answer (with `Connection:
  // close`, so their connections end with them), then what is still open is closed under its client.
  const close = async () => {
    const deadline = performance.now() + settings.shutdownTimeoutMs;
    inProgress.beginClose();
    // Stops listening and ends the idle connections; settles once every connection is gone (its
    // failure held until then, not left unhandled while the requests finish).
    const closed = app.close().then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    if (inProgress.size > 0) {
      logger.info({ requests: inProgress.size }, 'waiting for the requests in progress');
      const left = await inProgress.settled(Math.max(0, deadline - performance.now()));
      if (left > 0)
        logger.warn(
          { requests: left, timeoutMs: settings.shutdownTimeoutMs },
          'requests still in progress at SLUICE_SHUTDOWN_TIMEOUT_MS: closing under them',
        );
    }
    // A connection made idle since (its answer sent before the close began) goes now; one still
    // open at the deadline (a client that never finishes its request) is closed under its client.
    app.server.closeIdleConnections();
    let forced = false;
    const timer = setTimeout(
      () => {
        forced = true;
        app.server.closeAllConnections();
      },
      Math.max(0, deadline - performance.now()),
    );
    const failed = await closed;
    clearTimeout(timer);
    if (forced)
      logger.warn(
        { timeoutMs: settings.shutdownTimeoutMs },
        'connections still open at SLUICE_SHUTDOWN_TIMEOUT_MS: closed under their clients',
      );
    if (failed) throw failed.error;
  };
  try {
    const address = await app.listen({ host: settings.host, port: settings.port });
    return { address, close };
  } catch (error) {
    await close();
    const reason =
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? 'the address is in use (another sluice? set SLUICE_PORT)'
        : (error as Error).message;
    throw new Error(`cannot listen on ${settings.host}:${settings.port}: ${reason}`, { cause: error });
  }
}

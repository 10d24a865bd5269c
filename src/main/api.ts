/**
 * The API role: the HTTP app on its address, and the feed that hands what it accepts to the
 * dispatchers (in this process, or through Redis to any other). A worker-only instance serves its
 * probes and metrics, and has no feed.
 */
import { buildHttpApp } from '../http/app.js';
import type { HttpDeps } from '../http/deps.js';
import { RequestsInProgress } from '../http/requests-in-progress.js';
import { type DueFeed, startDueFeed } from './due-feed.js';
import type { Runtime } from './runtime.js';

export interface HttpRole {
  /** The address the server listens on (`http://host:port`). */
  readonly address: string;
  /** The feed of accepted messages when this instance serves the API; closed by {@link HttpRole.closeFeed}. */
  readonly feed: DueFeed | undefined;
  /**
   * Stops answering, then waits for the requests still in progress, those whose clients hung up
   * included (at most `SLUICE_SHUTDOWN_TIMEOUT_MS`): after it, no handler uses Redis or the
   * database, and each message a handler admitted is stored or its admission undone.
   */
  close(): Promise<void>;
  /** Stops the feed: after the dispatchers that listen on it have stopped. */
  closeFeed(): Promise<void>;
}

/**
 * Listens on `SLUICE_HOST:SLUICE_PORT` with every route (`servesApi`) or the operations routes
 * only. A port in use rejects with a readable reason, after closing what it opened. `deps`: what
 * the routes call, `runtime.http` unless given.
 */
export async function startHttp(runtime: Runtime, options: { servesApi: boolean; deps?: HttpDeps }): Promise<HttpRole> {
  const { settings, logger } = runtime;
  const inProgress = new RequestsInProgress();
  const app = await buildHttpApp(options.deps ?? runtime.http, { routes: options.servesApi ? 'all' : 'operations', inProgress });
  const feed = options.servesApi ? startDueFeed(runtime) : undefined;
  const close = async () => {
    await app.close();
    if (inProgress.size === 0) return;
    logger.info({ requests: inProgress.size }, 'waiting for the requests in progress');
    const left = await inProgress.settled(settings.shutdownTimeoutMs);
    if (left > 0)
      logger.warn(
        { requests: left, timeoutMs: settings.shutdownTimeoutMs },
        'requests still in progress at SLUICE_SHUTDOWN_TIMEOUT_MS: closing under them',
      );
  };
  const closeFeed = async () => feed?.close();
  try {
    const address = await app.listen({ host: settings.host, port: settings.port });
    return { address, feed, close, closeFeed };
  } catch (error) {
    await close();
    await closeFeed();
    const reason =
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? 'the address is in use (another sluice? set SLUICE_PORT)'
        : (error as Error).message;
    throw new Error(`cannot listen on ${settings.host}:${settings.port}: ${reason}`, { cause: error });
  }
}

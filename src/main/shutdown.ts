/**
 * `serve`'s stop (SIGTERM, SIGINT), in the order that leaves nothing in progress to meet a closed
 * dependency: the HTTP server stops answering and the handlers still running finish (bounded by
 * `SLUICE_SHUTDOWN_TIMEOUT_MS`); the dispatchers stop (their sends in flight finish, their waiting
 * claims go back); the feed indexes the last accepts; then the runtime drains the group commit
 * and closes Redis and the database.
 */
import type { Delivery } from '../delivery/delivery.js';
import type { HttpRole } from './api.js';
import type { Runtime } from './runtime.js';

export async function shutdown(runtime: Runtime, roles: { http: HttpRole; delivery?: Pick<Delivery, 'stop'> | undefined }): Promise<void> {
  await roles.http.close();
  await roles.delivery?.stop();
  await roles.http.closeFeed();
  await runtime.close();
}

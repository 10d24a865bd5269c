/**
 * `sluice_tenant_backlog`: every {@link TENANT_BACKLOG_REFRESH_MS} a worker counts the due backlog
 * of every tenant channel (one GROUP BY over the due messages, `BacklogRepository.dueByTenant`)
 * and replaces the gauge with the largest tenants' and an `other` sum (`Metrics.setTenantBacklog`).
 * Periodic, not on each scrape: the count's cost grows with the backlog, and a scrape every few
 * seconds (the console's live charts scrape every 2 s) must not run it that often.
 */
import type { TenantChannelBacklog } from '../metrics/index.js';
import type { Runtime } from './runtime.js';

/** How often the gauge is refreshed. */
export const TENANT_BACKLOG_REFRESH_MS = 15_000;

export interface TenantBacklogGauge {
  /** Counts now and replaces the gauge (what the timer runs); a failure is counted and keeps the last values. */
  refresh(): Promise<void>;
  /** Stops the timer and waits for a refresh in progress. */
  close(): Promise<void>;
}

export function keepTenantBacklogGauge(
  runtime: Pick<Runtime, 'clock' | 'logger' | 'metrics'> & {
    repositories: { backlog: { dueByTenant(now: number): Promise<TenantChannelBacklog[]> } };
  },
  options: { intervalMs?: number } = {},
): TenantBacklogGauge {
  const { clock, logger, metrics } = runtime;
  let running: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    running ??= runtime.repositories.backlog
      .dueByTenant(clock.now())
      .then(
        (rows) => metrics.setTenantBacklog(rows),
        (error: unknown) => {
          metrics.collectErrors.inc({ collector: 'tenant_backlog' });
          logger.debug({ err: error }, 'counting the tenant backlog failed: the gauge keeps its last values');
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  void refresh();
  const timer = setInterval(() => void refresh(), options.intervalMs ?? TENANT_BACKLOG_REFRESH_MS);
  timer.unref();
  return {
    refresh,
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}

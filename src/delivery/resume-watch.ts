/**
 * Tells the dispatchers when a suspended tenant is resumed. While a tenant is suspended its
 * messages stay queued or scheduled and no claim takes them (`MessagesRepository`); in Redis mode
 * a claim drops their due-index entries and the rebuild from SQL leaves them out, so on resume the
 * index must be rebuilt at once, not at the minute's rebuild.
 *
 * The set of suspended tenants is re-read on every tenant change (`tenant-watch.ts`); a tenant
 * that left the set was resumed. A resume missed altogether still reaches the index at its
 * periodic rebuild.
 */
import { type TenantWatch, type TenantWatchDeps, watchTenants } from './tenant-watch.js';

export function watchResumes(deps: TenantWatchDeps, onResume: (tenantIds: string[]) => void): TenantWatch {
  let suspended: Set<string> | undefined;
  return watchTenants(
    deps,
    async (stopped) => {
      const now = new Set(await deps.tenants.suspendedIds());
      const resumed = suspended ? [...suspended].filter((id) => !now.has(id)) : [];
      suspended = now;
      if (resumed.length > 0 && !stopped()) onResume(resumed);
    },
    'reading the suspended tenants failed; a resume reaches the due index at its next rebuild',
  );
}

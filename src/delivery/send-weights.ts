/**
 * The tenants' send weights (`tenants.send_weight`), for the fair order of the claims, the
 * broker's hand-off and the shared paces (`core/fair-share.ts`), re-read on every tenant change
 * (`tenant-watch.ts`); until the first read, and for a tenant created since, a weight is 1.
 */
import { type TenantWatch, type TenantWatchDeps, watchTenants } from './tenant-watch.js';

export interface SendWeights extends TenantWatch {
  /** The weights last read (a tenant not listed weighs 1). */
  current(): ReadonlyMap<string, number>;
}

export function watchSendWeights(deps: TenantWatchDeps): SendWeights {
  let weights: ReadonlyMap<string, number> = new Map();
  const watch = watchTenants(
    deps,
    async () => {
      // Only the weights that differ from 1 are kept: the claim script is handed these.
      weights = new Map([...(await deps.tenants.sendWeights())].filter(([, weight]) => weight !== 1));
    },
    'reading the tenants’ send weights failed; the last ones read stay in force',
  );
  return { current: () => weights, stop: () => watch.stop() };
}

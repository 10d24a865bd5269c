/**
 * The tenants' send weights (`tenants.send_weight`), for the fair order of the claims, the
 * broker's hand-off and the shared paces (`core/fair-share.ts`). Read from SQL at start and again
 * after every announced tenant change (`tenant:<id>` from any instance, `'*'` after a missed
 * announcement); until the first read, and for a tenant created since, a weight is 1.
 */
import { ThrottledLog } from '../infra/throttled-log.js';
import type { DeliveryDeps } from './ports.js';

export interface SendWeights {
  /** The weights last read (a tenant not listed weighs 1). */
  current(): ReadonlyMap<string, number>;
  /** Stops listening; waits for a read in progress. */
  stop(): Promise<void>;
}

export function watchSendWeights(deps: Pick<DeliveryDeps, 'tenants' | 'clock' | 'logger' | 'onConfigChange'>): SendWeights {
  const errors = new ThrottledLog<{ err: unknown }>(
    (fields) => deps.logger.warn(fields, 'reading the tenants’ send weights failed; the last ones read stay in force'),
    deps.clock,
  );
  let weights: ReadonlyMap<string, number> = new Map();
  let reading: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const read = async (): Promise<void> => {
    do {
      again = false;
      try {
        // Only the weights that differ from 1 are kept: the claim script is handed these.
        weights = new Map([...(await deps.tenants.sendWeights())].filter(([, weight]) => weight !== 1));
      } catch (error) {
        errors.record({ err: error });
      }
    } while (again && !stopped);
  };
  // One read at a time; a change announced during a read makes one more read after it.
  const reread = () => {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = read().finally(() => {
      reading = undefined;
    });
  };
  const unsubscribe = deps.onConfigChange((key) => {
    if (key === '*' || key.startsWith('tenant:')) reread();
  });
  reread();
  return {
    current: () => weights,
    async stop() {
      stopped = true;
      unsubscribe();
      await reading;
    },
  };
}

/**
 * Re-reads something about the tenants from SQL at start and again after every announced tenant
 * change (`tenant:<id>` from any instance, `'*'` after a missed announcement). One read at a time;
 * a change announced during a read makes one more read after it. A failed read is logged
 * (throttled) and the last one read stays in force.
 */
import { ThrottledLog } from '../infra/throttled-log.js';
import type { DeliveryDeps } from './ports.js';

export interface TenantWatch {
  /** Stops listening; waits for a read in progress. */
  stop(): Promise<void>;
}

export type TenantWatchDeps = Pick<DeliveryDeps, 'tenants' | 'clock' | 'logger' | 'onConfigChange'>;

export function watchTenants(deps: TenantWatchDeps, read: (stopped: () => boolean) => Promise<void>, failureMessage: string): TenantWatch {
  const errors = new ThrottledLog<{ err: unknown }>((fields) => deps.logger.warn(fields, failureMessage), deps.clock);
  let reading: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const isStopped = () => stopped;
  const readUntilCurrent = async (): Promise<void> => {
    do {
      again = false;
      try {
        await read(isStopped);
      } catch (error) {
        errors.record({ err: error });
      }
    } while (again && !stopped);
  };
  const reread = () => {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = readUntilCurrent().finally(() => {
      reading = undefined;
    });
  };
  const unsubscribe = deps.onConfigChange((key) => {
    if (key === '*' || key.startsWith('tenant:')) reread();
  });
  reread();
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      await reading;
    },
  };
}

/**
 * Tells the dispatchers when a suspended tenant is resumed. While a tenant is suspended its
 * messages stay queued or scheduled and no claim takes them (`MessagesRepository`); in Redis mode
 * a claim drops their due-index entries and the rebuild from SQL leaves them out, so on resume the
 * index must be rebuilt at once, not at the minute's rebuild.
 *
 * The set of suspended tenants is read from SQL at start and again after every announced tenant
 * change (`tenant:<id>` from any instance, `'*'` after a missed announcement); a tenant that left
 * the set was resumed. A resume missed altogether still reaches the index at its periodic rebuild.
 */
import { ThrottledLog } from '../infra/throttled-log.js';
import type { DeliveryDeps } from './ports.js';

export interface ResumeWatch {
  /** Stops listening; waits for a read in progress. */
  stop(): Promise<void>;
}

export function watchResumes(
  deps: Pick<DeliveryDeps, 'tenants' | 'clock' | 'logger' | 'onConfigChange'>,
  onResume: (tenantIds: string[]) => void,
): ResumeWatch {
  const errors = new ThrottledLog<{ err: unknown }>(
    (fields) => deps.logger.warn(fields, 'reading the suspended tenants failed; a resume reaches the due index at its next rebuild'),
    deps.clock,
  );
  let suspended: Set<string> | undefined;
  let reading: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const read = async (): Promise<void> => {
    do {
      again = false;
      try {
        const now = new Set(await deps.tenants.suspendedIds());
        const resumed = suspended ? [...suspended].filter((id) => !now.has(id)) : [];
        suspended = now;
        if (resumed.length > 0 && !stopped) onResume(resumed);
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
    async stop() {
      stopped = true;
      unsubscribe();
      await reading;
    },
  };
}

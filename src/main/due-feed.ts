/**
 * How an accepted message reaches the dispatcher that will send it, whichever instance accepted it
 * and whichever instance holds its partition's lock.
 *
 * - Redis mode: the message's entry goes into the due index, and the worker instances are told on
 *   a Redis channel (`<prefix>due`) when the earliest message of the partition is due, if that is
 *   before their next poll: the lock holder, wherever it runs, claims an immediate message at
 *   once. Without the entry, a message accepted by an instance that runs no dispatcher
 *   (`SLUICE_ROLES=api`) would wait for the minute's rebuild from SQL.
 * - Embedded: the dispatchers claim with a SQL query, so there is nothing to index; the wake is
 *   in process.
 *
 * Messages accepted in one event-loop turn are indexed together: one script call and at most one
 * wake per partition, not one per message (at thousands of accepts a second, per-message calls
 * cost more than the sends).
 */
import type { Logger } from 'pino';
import type { AdmissionOutcome } from '../admission/context.js';
import type { NewMessage } from '../admission/ports.js';
import { partitionName } from '../delivery/dispatcher.js';
import type { DueEntry, DueIndex } from '../delivery/due-index/index.js';
import type { WakeListener, WakeSource } from '../delivery/ports.js';
import type { ChangeBus } from '../infra/change-bus.js';
import { ThrottledLog } from '../infra/throttled-log.js';
import type { Clock } from '../limiter/index.js';
import type { Settings } from '../settings/settings.js';
import { shardOf } from '../storage/ids.js';
import type { Runtime } from './runtime.js';

/** What the feed uses: the accepted messages, the backend's due index and wake bus. */
export interface DueFeedDeps {
  settings: Pick<Settings, 'partitions' | 'pollMs'>;
  clock: Clock;
  logger: Logger;
  /** Subscribes to every accepted message, after its commit. */
  onAccepted(listener: (message: NewMessage, outcome: AdmissionOutcome) => void): void;
  /** Undefined embedded: the dispatchers claim with SQL queries, so there is nothing to index. */
  dueIndex: DueIndex | undefined;
  /** Reaches the dispatchers of every instance (this one included). */
  wakeBus: ChangeBus;
}

export interface DueFeed extends WakeSource {
  /** Listens for wakes from every instance (this one included); returns the unsubscribe. */
  onWake(listener: WakeListener): () => void;
  /** Stops feeding; waits for the indexing in progress. */
  close(): Promise<void>;
}

/** The feed's deps from a runtime: its accepted messages, the backend's due index and wake bus. */
export const dueFeedDeps = (runtime: Runtime): DueFeedDeps => ({
  settings: runtime.settings,
  clock: runtime.clock,
  logger: runtime.logger,
  onAccepted: runtime.onAccepted,
  dueIndex: runtime.backend.kind === 'embedded' ? undefined : runtime.backend.dueIndex,
  wakeBus: runtime.backend.wakeBus,
});

/**
 * Starts feeding accepted messages to the due index and the wake bus. The bus is the backend's
 * (closed with it); a reconnected subscriber may have missed wakes, and it then says '*', a wake
 * for everything.
 */
export function startDueFeed(deps: DueFeedDeps): DueFeed {
  const { settings, clock, logger, dueIndex, wakeBus: wakes } = deps;
  let closed = false;
  let accepted = new Map<string, { entries: DueEntry[]; earliest: number }>();
  const indexing = new Set<Promise<void>>();
  const subscriptions: (() => void)[] = [];
  // Every batch fails alike while Redis is away: one line per 10 s.
  const addErrors = new ThrottledLog<{ err: unknown; partition: string }>(
    (fields) => logger.warn(fields, 'due index add failed; the next rebuild from SQL restores it'),
    clock,
  );

  const indexAccepted = async () => {
    const batch = accepted;
    accepted = new Map();
    // Due after the next poll: the lock holder's own look at what is due next finds it in time.
    const wakeBefore = clock.now() + settings.pollMs;
    await Promise.all(
      [...batch].map(async ([partition, { entries, earliest }]) => {
        try {
          await dueIndex?.addMany(partition, entries);
          if (earliest < wakeBefore) await wakes.publish(`${partition}@${earliest}`);
        } catch (error) {
          addErrors.record({ err: error, partition });
        }
      }),
    );
  };

  deps.onAccepted((message) => {
    if (closed) return;
    const partition = partitionName(message.channel, shardOf(message.id) % settings.partitions);
    if (accepted.size === 0) {
      setImmediate(() => {
        const run = indexAccepted();
        indexing.add(run);
        void run.finally(() => indexing.delete(run));
      });
    }
    let pending = accepted.get(partition);
    if (!pending) {
      pending = { entries: [], earliest: Number.POSITIVE_INFINITY };
      accepted.set(partition, pending);
    }
    pending.entries.push({
      id: message.id,
      tenantId: message.tenantId,
      dueAt: message.dueAt,
      ...(message.priority === 'bulk' ? { priority: 'bulk' as const } : {}),
    });
    pending.earliest = Math.min(pending.earliest, message.dueAt);
  });

  return {
    onWake(listener) {
      const unsubscribe = wakes.subscribe((key) => {
        const at = key.lastIndexOf('@');
        if (at < 0) listener(undefined, clock.now());
        else listener(key.slice(0, at), Number(key.slice(at + 1)));
      });
      subscriptions.push(unsubscribe);
      return unsubscribe;
    },
    async close() {
      closed = true;
      // Let a batch queued by this turn's accepts run first.
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(indexing);
      for (const unsubscribe of subscriptions.splice(0)) unsubscribe();
    },
  };
}

/**
 * Delivery: a dispatcher for every (channel, partition), woken by the due feed and by resumed
 * tenants, sharing the partitions with the other workers (`roster.ts`, Redis mode), and the
 * retention purger. Built from narrow dependencies (`ports.ts`); `main/worker.ts` wires them.
 */
import { CHANNELS } from '../core/channels.js';
import { Dispatcher, partitionName } from './dispatcher.js';
import type { DeliveryDeps } from './ports.js';
import { SqlProviderDirectory } from './provider-directory.js';
import { watchResumes } from './resume-watch.js';
import { RetentionPurger } from './retention.js';
import { EventDispatcher } from './webhooks/event-dispatcher.js';

export interface Delivery {
  readonly dispatchers: Dispatcher[];
  /** One per partition: the outbox's webhook events. */
  readonly eventDispatchers: EventDispatcher[];
  /** Stops waking, claiming and purging; waits for the sends in flight; releases the locks. */
  stop(): Promise<void>;
}

export function startDelivery(deps: DeliveryDeps): Delivery {
  const { settings, roster } = deps;
  const providers = new SqlProviderDirectory(deps, deps.fallbackProvider);
  const dispatchers: Dispatcher[] = [];
  const byPartition = new Map<string, Dispatcher>();
  for (const channel of CHANNELS) {
    for (let partition = 0; partition < settings.partitions; partition++) {
      const dispatcher = new Dispatcher({
        channel,
        partition,
        partitions: settings.partitions,
        lock: deps.locks.createLock(`dispatch:${partitionName(channel, partition)}`),
        messages: deps.messages,
        providers,
        ...(deps.dueIndex ? { dueIndex: deps.dueIndex } : {}),
        clock: deps.clock,
        logger: deps.logger,
        metrics: deps.metrics,
        pollMs: settings.pollMs,
        leaseMs: settings.leaseMs,
        concurrency: settings.sendConcurrency,
        retryBaseMs: settings.retryBaseMs,
        retryMaxMs: settings.retryMaxMs,
        ...(roster ? { share: roster } : {}),
      });
      dispatchers.push(dispatcher);
      byPartition.set(dispatcher.name, dispatcher);
    }
  }
  // Webhook events: a share of their own partitions among the same workers (counted apart from
  // the message dispatchers'), so they spread over the workers too.
  const eventShare = roster?.shareOf(settings.partitions);
  const eventDispatchers: EventDispatcher[] = [];
  for (let partition = 0; partition < settings.partitions; partition++)
    eventDispatchers.push(
      new EventDispatcher({
        partition,
        partitions: settings.partitions,
        lock: deps.locks.createLock(`webhooks:${partition}`),
        webhooks: deps.webhooks,
        events: deps.webhookEvents,
        clock: deps.clock,
        logger: deps.logger,
        metrics: deps.metrics,
        pollMs: settings.webhookPollMs,
        leaseMs: settings.leaseMs,
        concurrency: settings.webhookConcurrency,
        timeoutMs: settings.webhookTimeoutMs,
        retryBaseMs: settings.webhookRetryBaseMs,
        retryMaxMs: settings.webhookRetryMaxMs,
        urlPolicy: { allowPrivate: settings.webhookAllowPrivate, allowedHosts: settings.webhookAllowedHosts },
        resolver: deps.resolver,
        ...(eventShare ? { share: eventShare } : {}),
      }),
    );
  // A webhook's secrets rotated or removed on any instance (`webhook:<id>`), or announcements
  // possibly missed ('*'): the dispatchers drop the secrets they hold, so the next post signs anew.
  const stopForgetting = deps.onConfigChange((key) => {
    if (key === '*') for (const dispatcher of eventDispatchers) dispatcher.forgetSecrets();
    else if (key.startsWith('webhook:')) for (const dispatcher of eventDispatchers) dispatcher.forgetSecrets(key.slice('webhook:'.length));
  });
  // The first beat before the first lock: a worker joining others knows its share from the start.
  let stopped = false;
  const started = (roster ? roster.start() : Promise.resolve()).then(() => {
    if (!stopped) for (const dispatcher of [...dispatchers, ...eventDispatchers]) dispatcher.start();
  });
  // Finished messages, finished webhook events, and receipts that never found their send: each
  // kept for the retention period, then purged in batches.
  const purgers =
    settings.retentionDays > 0
      ? [
          { messages: deps.messages, onPurged: (count: number) => deps.metrics.messagesPurged.inc(count) },
          { messages: deps.webhookEvents, what: 'finished webhook events' },
          { messages: deps.pendingReceipts, what: 'receipts that matched no sent message' },
        ].map((purged) => new RetentionPurger({ ...purged, clock: deps.clock, logger: deps.logger, retentionDays: settings.retentionDays }))
      : [];
  for (const purger of purgers) purger.start();
  const stopWaking = deps.wakes.onWake((partition, dueAt) => {
    // '*' (the wake channel was reconnected: anything may have been missed) wakes every dispatcher,
    // a holder or one waiting to take its lock now that Redis is back. A partition's wake, sent for
    // every batch of accepts by every instance, only its holder: a non-holder would try to take
    // the lock at each one; it tries at its own pace, every poll.
    if (partition === undefined) for (const dispatcher of dispatchers) dispatcher.wakeBy(dueAt);
    else {
      const dispatcher = byPartition.get(partition);
      if (dispatcher?.holdsLock()) dispatcher.wakeBy(dueAt);
    }
  });
  // A resumed tenant's messages are due again: the holders rebuild their index and tick at once.
  const resumes = watchResumes(deps, (tenantIds) => {
    deps.logger.info({ tenants: tenantIds }, 'tenants resumed: their held messages are due again');
    for (const dispatcher of dispatchers) if (dispatcher.holdsLock()) dispatcher.refeed();
  });
  return {
    dispatchers,
    eventDispatchers,
    async stop() {
      await resumes.stop();
      stopWaking();
      stopForgetting();
      stopped = true;
      await started;
      await Promise.all([
        ...dispatchers.map((dispatcher) => dispatcher.stop()),
        ...eventDispatchers.map((dispatcher) => dispatcher.stop()),
        ...purgers.map((purger) => purger.stop()),
      ]);
      await roster?.stop();
    },
  };
}

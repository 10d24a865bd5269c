/**
 * Delivery: a dispatcher for every (channel, partition), woken by the due feed and by resumed
 * tenants, sharing the partitions with the other workers (`roster.ts`, Redis mode), and the
 * retention purger. Built from narrow dependencies (`ports.ts`); `main/worker.ts` wires them.
 * With a broker the dispatchers hand due messages to it, a consumer per channel sends what this
 * worker pulls (`broker-consumer.ts`), and a publisher per partition puts the status events on
 * its bus (`bus-publisher.ts`).
 */
import { CHANNELS } from '../core/channels.js';
import { maxInFlight } from '../core/fair-share.js';
import type { Message } from '../storage/repositories/messages.js';
import { BrokerConsumer } from './broker-consumer.js';
import { BusPublisher } from './bus-publisher.js';
import { Dispatcher, partitionName } from './dispatcher.js';
import type { DeliveryDeps } from './ports.js';
import { SqlProviderDirectory } from './provider-directory.js';
import { watchResumes } from './resume-watch.js';
import { RetentionPurger } from './retention.js';
import { watchSendWeights } from './send-weights.js';
import { EventDispatcher } from './webhooks/event-dispatcher.js';

export interface Delivery {
  readonly dispatchers: Dispatcher[];
  /** One per partition: the outbox's webhook events. */
  readonly eventDispatchers: EventDispatcher[];
  /** Broker mode: one per channel, sending what this worker pulls. */
  readonly consumers: BrokerConsumer[];
  /** Broker mode: one per partition, the status events onto the bus. */
  readonly busPublishers: BusPublisher[];
  /** Stops waking, claiming and purging; waits for the sends in flight; releases the locks. */
  stop(): Promise<void>;
}

export function startDelivery(deps: DeliveryDeps): Delivery {
  const { settings, roster, broker } = deps;
  const weights = watchSendWeights(deps);
  const providers = new SqlProviderDirectory({ ...deps, weights: weights.current }, deps.fallbackProvider);
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
        weights: weights.current,
        ...(roster ? { share: roster } : {}),
        ...(broker
          ? {
              handOff: {
                broker,
                republishAfterMs: settings.brokerRepublishAfterMs,
                window: settings.brokerHandOffWindow || settings.sendConcurrency,
              },
            }
          : {}),
      });
      dispatchers.push(dispatcher);
      byPartition.set(dispatcher.name, dispatcher);
    }
  }
  // Broker mode: what goes back through the due index (a long retry, a job handed back) wakes its
  // partition's dispatcher when it runs here; elsewhere, the holder finds it by its next look.
  const requeue = async (message: Message, dueAt: number) => {
    const partition = partitionName(message.channel, message.shard % settings.partitions);
    await deps.dueIndex?.addMany(partition, [{ id: message.id, tenantId: message.tenantId, dueAt, priority: message.priority }]);
    const dispatcher = byPartition.get(partition);
    if (dispatcher?.holdsLock()) dispatcher.wakeBy(dueAt);
  };
  const consumers = broker
    ? CHANNELS.map(
        (channel) =>
          new BrokerConsumer({
            channel,
            broker,
            messages: deps.messages,
            providers,
            clock: deps.clock,
            logger: deps.logger,
            metrics: deps.metrics,
            leaseMs: settings.leaseMs,
            // Every job a partition has in the broker (its hand-off window, shares included) can be
            // pulled at once: the stream queues no tenant's jobs behind another's held in slots.
            concurrency: maxInFlight(settings.sendConcurrency),
            retryBaseMs: settings.retryBaseMs,
            retryMaxMs: settings.retryMaxMs,
            requeue,
            onSettled: (partition) => byPartition.get(partitionName(channel, partition))?.jobSettled(),
          }),
      )
    : [];
  const busPublishers =
    broker && settings.brokerEvents
      ? Array.from(
          { length: settings.partitions },
          (_, partition) =>
            new BusPublisher({
              partition,
              partitions: settings.partitions,
              lock: deps.locks.createLock(`bus-events:${partition}`),
              events: deps.busEvents,
              broker,
              clock: deps.clock,
              logger: deps.logger,
              metrics: deps.metrics,
              pollMs: settings.pollMs,
              leaseMs: settings.leaseMs,
            }),
        )
      : [];
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
    if (!stopped) for (const part of [...dispatchers, ...eventDispatchers, ...consumers, ...busPublishers]) part.start();
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
    consumers,
    busPublishers,
    async stop() {
      await resumes.stop();
      await weights.stop();
      stopWaking();
      stopForgetting();
      stopped = true;
      await started;
      await Promise.all([
        ...dispatchers.map((dispatcher) => dispatcher.stop()),
        ...eventDispatchers.map((dispatcher) => dispatcher.stop()),
        ...consumers.map((consumer) => consumer.stop()),
        ...busPublishers.map((publisher) => publisher.stop()),
        ...purgers.map((purger) => purger.stop()),
      ]);
      await roster?.stop();
    },
  };
}

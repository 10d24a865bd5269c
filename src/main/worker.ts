/**
 * What the worker role's delivery is built from: the repositories, the backend's limiter, locks,
 * due index and roster, the feed that wakes the dispatchers, and the provider that serves the
 * embedded default's tenant channels while no provider is stored.
 */
import { type Delivery, startDelivery } from '../delivery/delivery.js';
import type { DeliveryDeps, WakeSource } from '../delivery/ports.js';
import type { Provider } from '../providers/provider.js';
import { type DueFeed, dueFeedDeps, startDueFeed } from './due-feed.js';
import type { Runtime } from './runtime.js';

/**
 * Starts delivery over `runtime`, woken by `options.feed` (the process's feed, when it also serves
 * the API) or by a feed of its own, closed on stop.
 */
export function startWorker(runtime: Runtime, fallbackProvider: Provider, options: { feed?: DueFeed } = {}): Delivery {
  const feed = options.feed ?? startDueFeed(dueFeedDeps(runtime));
  const delivery = startDelivery(deliveryDeps(runtime, fallbackProvider, feed));
  return {
    dispatchers: delivery.dispatchers,
    eventDispatchers: delivery.eventDispatchers,
    consumers: delivery.consumers,
    busPublishers: delivery.busPublishers,
    async stop() {
      await delivery.stop();
      if (!options.feed) await feed.close();
    },
  };
}

export function deliveryDeps(runtime: Runtime, fallbackProvider: Provider, wakes: WakeSource): DeliveryDeps {
  const { settings, backend, repositories } = runtime;
  const shared = backend.kind === 'embedded' ? undefined : backend;
  // Several workers share the partitions through a roster; with the broker, its consumers are
  // the membership; embedded, this worker holds them all.
  const roster = shared && backend.broker.kind === 'none' ? shared.roster(settings.partitions) : undefined;
  return {
    settings,
    clock: runtime.clock,
    logger: runtime.logger,
    metrics: runtime.metrics,
    messages: repositories.messages,
    providers: repositories.providers,
    tenants: repositories.tenants,
    limiter: backend.limiter,
    locks: backend.locks,
    ...(shared ? { dueIndex: shared.dueIndex } : {}),
    ...(roster ? { roster } : {}),
    wakes,
    onConfigChange: (listener) => runtime.onConfigChange(listener),
    resolver: runtime.resolver,
    webhooks: repositories.webhooks,
    webhookEvents: repositories.webhookEvents,
    pendingReceipts: repositories.receipts,
    fallbackProvider,
    // With the broker: hand-off, consumers and the events bus instead of the roster.
    ...(backend.broker.kind === 'jetstream' ? { broker: backend.broker.port } : {}),
    busEvents: repositories.busEvents,
  };
}

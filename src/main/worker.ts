/**
 * The worker role: delivery wired from the runtime. Locks and the partition roster from Redis when
 * configured (else in process: one worker), the runtime's one due index, the repositories and the
 * shared limiter delivery uses, and the due feed that wakes the dispatchers.
 */
import type { Redis } from 'ioredis';
import { CHANNELS } from '../core/channels.js';
import { type Delivery, startDelivery } from '../delivery/delivery.js';
import type { DeliveryDeps } from '../delivery/ports.js';
import { WorkerRoster } from '../delivery/roster.js';
import { createInProcessLockFactory, createRedisLockFactory } from '../infra/lock/index.js';
import type { Provider } from '../providers/provider.js';
import { type DueFeed, startDueFeed } from './due-feed.js';
import type { Runtime } from './runtime.js';

export interface WorkerOptions {
  /**
   * The process's feed of accepted messages (`startDueFeed`), when it also serves the API. Without
   * one, the worker starts its own and closes it on stop.
   */
  feed?: DueFeed;
}

/**
 * Starts a dispatcher for every (channel, partition). `fallbackProvider` (the console) serves the
 * tenant channels of the embedded default, while no provider at all is stored.
 */
export function startWorker(runtime: Runtime, fallbackProvider: Provider, options: WorkerOptions = {}): Delivery {
  const feed = options.feed ?? startDueFeed(runtime);
  const delivery = startDelivery(deliveryDeps(runtime, fallbackProvider, feed));
  return {
    dispatchers: delivery.dispatchers,
    eventDispatchers: delivery.eventDispatchers,
    async stop() {
      await delivery.stop();
      if (!options.feed) await feed.close();
    },
  };
}

function deliveryDeps(runtime: Runtime, fallbackProvider: Provider, wakes: DueFeed): DeliveryDeps {
  const { settings, redis, repositories } = runtime;
  return {
    settings,
    clock: runtime.clock,
    logger: runtime.logger,
    metrics: runtime.metrics,
    messages: repositories.messages,
    providers: repositories.providers,
    tenants: repositories.tenants,
    limiter: runtime.limiter,
    locks: redis
      ? createRedisLockFactory({ client: redis as Redis, leaseMs: settings.leaseMs, keyPrefix: settings.redisKeyPrefix })
      : createInProcessLockFactory(),
    ...(runtime.dueIndex ? { dueIndex: runtime.dueIndex } : {}),
    // Several workers share the partitions; without Redis there is one worker.
    ...(redis
      ? {
          roster: new WorkerRoster({
            client: redis as Redis,
            keyPrefix: settings.redisKeyPrefix,
            partitions: CHANNELS.length * settings.partitions,
            leaseMs: settings.leaseMs,
            logger: runtime.logger,
          }),
        }
      : {}),
    wakes,
    onConfigChange: (listener) => runtime.onConfigChange(listener),
    resolver: runtime.resolver,
    webhooks: repositories.webhooks,
    webhookEvents: repositories.webhookEvents,
    pendingReceipts: repositories.receipts,
    fallbackProvider,
  };
}

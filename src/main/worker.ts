/**
 * What the worker role's delivery is built from: the repositories, the backend's limiter, locks,
 * due index and roster, the feed that wakes the dispatchers, and the provider that serves the
 * embedded default's tenant channels while no provider is stored.
 */
import type { DeliveryDeps, WakeSource } from '../delivery/ports.js';
import type { Provider } from '../providers/provider.js';
import type { Runtime } from './runtime.js';

export function deliveryDeps(runtime: Runtime, fallbackProvider: Provider, wakes: WakeSource): DeliveryDeps {
  const { settings, backend, repositories } = runtime;
  const roster = backend.roster(settings.partitions);
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
    ...(backend.dueIndex ? { dueIndex: backend.dueIndex } : {}),
    // Several workers share the partitions; without one, this worker holds them all.
    ...(roster ? { roster } : {}),
    wakes,
    onConfigChange: (listener) => runtime.onConfigChange(listener),
    webhooks: repositories.webhooks,
    webhookEvents: repositories.webhookEvents,
    pendingReceipts: repositories.receipts,
    fallbackProvider,
  };
}

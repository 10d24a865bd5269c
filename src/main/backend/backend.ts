/**
 * What backs sluice's shared state, chosen once per process (envoy ratelimit's `createLimiter`):
 * the embedded default (everything in this process, one instance), Redis, or Redis Cluster. The
 * choice is made here and nowhere else; every other part receives what the backend provides:
 * the limiter and its breaker, the risk event store, the change bus, locks, the due index, the
 * wake bus, the worker roster and the shared tier of the live caches.
 */
import type { RedisTarget } from '../../infra/redis-client.js';
import type { Settings } from '../../settings/settings.js';
import { embeddedBackend } from './embedded.js';
import { redisBackend } from './redis.js';
import type { Backend, BackendContext } from './types.js';

export type { Backend, BackendContext, BrokerAxis, EmbeddedBackend, RedisBackend } from './types.js';

/** The backend's kind and, for Redis, where it is: decided from the settings once, here. */
export type BackendChoice = { readonly kind: 'embedded' } | RedisTarget;

/** The one switch: Redis Cluster seeds choose the cluster, else a Redis URL Redis; neither, the embedded default. */
export function backendChoiceOf(settings: Pick<Settings, 'redisUrl' | 'redisClusterNodes'>): BackendChoice {
  if (settings.redisClusterNodes.length > 0) return { kind: 'redis-cluster', nodes: settings.redisClusterNodes };
  return settings.redisUrl ? { kind: 'redis', url: settings.redisUrl } : { kind: 'embedded' };
}

export function createBackend(context: BackendContext): Backend {
  const choice = backendChoiceOf(context.settings);
  return choice.kind === 'embedded' ? embeddedBackend(context) : redisBackend(context, choice);
}

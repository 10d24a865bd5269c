/**
 * What backs sluice's shared state, chosen once per process (envoy ratelimit's `createLimiter`):
 * the embedded default (everything in this process, one instance), Redis, or Redis Cluster. The
 * choice is made here and nowhere else; every other part receives what the backend provides:
 * the limiter and its breaker, the risk event store, the change bus, locks, the due index, the
 * wake bus, the worker roster and the shared tier of the live caches.
 */
import type { Settings } from '../../settings/settings.js';
import { embeddedBackend } from './embedded.js';
import { redisBackend } from './redis.js';
import type { Backend, BackendContext } from './types.js';

export type { Backend, BackendContext } from './types.js';

/** The one switch: Redis Cluster seeds choose the cluster, else a Redis URL Redis; neither, the embedded default. */
export function backendKindOf(settings: Pick<Settings, 'redisUrl' | 'redisClusterNodes'>): Backend['kind'] {
  if (settings.redisClusterNodes.length > 0) return 'redis-cluster';
  return settings.redisUrl ? 'redis' : 'embedded';
}

export function createBackend(context: BackendContext): Backend {
  return backendKindOf(context.settings) === 'embedded' ? embeddedBackend(context) : redisBackend(context);
}

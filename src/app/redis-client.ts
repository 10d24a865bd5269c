import { Cluster, Redis } from 'ioredis';
import type { Settings } from '../config/settings.js';

/** The shared Redis client from settings: a Cluster when seed nodes are given, else one server, else none. */
export function createRedisClient(settings: Pick<Settings, 'redisUrl' | 'redisClusterNodes'>): Redis | Cluster | undefined {
  // Commands fail fast while Redis is down (the breaker decides what happens then) instead of
  // queueing without bound; reconnection goes on in the background.
  const common = { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 2000, lazyConnect: false } as const;
  if (settings.redisClusterNodes.length) {
    const nodes = settings.redisClusterNodes.map((hostPort) => {
      const [host, port] = hostPort.split(':');
      return { host: host || '127.0.0.1', port: Number(port) || 6379 };
    });
    return new Cluster(nodes, { redisOptions: common, enableOfflineQueue: true });
  }
  if (settings.redisUrl) return new Redis(settings.redisUrl, common);
  return undefined;
}

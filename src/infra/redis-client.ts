import { Cluster, Redis } from 'ioredis';
import { withDeadline } from '../core/deadline.js';

/**
 * Which Redis the backend shares its state in, as `main/backend/backend.ts` decided it from the
 * settings: one server (its URL) or a Cluster (its seed nodes, `host:port`).
 */
export type RedisTarget =
  | { readonly kind: 'redis'; readonly url: string }
  | { readonly kind: 'redis-cluster'; readonly nodes: readonly string[] };

/**
 * The shared Redis client of `target`: a Cluster or one server, as decided. `onError` hears
 * connection errors (without a listener ioredis prints each one to stderr as an "Unhandled error
 * event"); `onReady` hears every (re)connection.
 */
export function createRedisClient(
  target: RedisTarget,
  commandTimeoutMs: number,
  events: { onError?: (error: Error) => void; onReady?: () => void } = {},
): Redis | Cluster {
  // Commands fail fast while Redis is down (the breaker decides what happens then) instead of
  // queueing without bound; reconnection goes on in the background. A frozen Redis (no answer,
  // no error) fails a command after `commandTimeout` instead of hanging its caller: an admin
  // call, a lock release at shutdown.
  const common = {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2000,
    commandTimeout: commandTimeoutMs,
    lazyConnect: false,
  } as const;
  const client =
    target.kind === 'redis-cluster'
      ? new Cluster(
          target.nodes.map((hostPort) => {
            const [host, port] = hostPort.split(':');
            return { host: host || '127.0.0.1', port: Number(port) || 6379 };
          }),
          { redisOptions: common, enableOfflineQueue: true },
        )
      : new Redis(target.url, common);
  client.on('error', (error: Error) => events.onError?.(error));
  if (events.onReady) client.on('ready', events.onReady);
  return client;
}

/**
 * What /readyz says of Redis: `reachable`, or a cluster's failed state. Each call waits `ms` at
 * most (well under a probe's usual 1 s timeout: a frozen Redis must not make the probe time out);
 * rejects when Redis does not answer. A node of a failed cluster (slots uncovered, no quorum)
 * still answers PING, so a cluster's state is read from `CLUSTER INFO`.
 */
export async function redisReadiness(redis: Redis | Cluster, ms: number): Promise<string> {
  await withDeadline(redis.ping(), ms, 'ping timed out');
  if (!(redis instanceof Cluster)) return 'reachable';
  const info = String(await withDeadline(redis.cluster('INFO'), ms, 'CLUSTER INFO timed out'));
  const state = /cluster_state:(\w+)/.exec(info)?.[1];
  return state === 'ok' ? 'reachable' : `cluster state ${state ?? 'unknown'}: decisions use the fallback where its slots are lost`;
}

/**
 * The one `maxmemory-policy` under which Redis never drops a key. Every limiter key (log, counter,
 * ban) has a TTL for its cleanup, so the `volatile-*` policies may drop them as surely as the
 * `allkeys-*` ones: an evicted ban or count lets a recipient be sent to again.
 */
const SAFE_EVICTION_POLICY = 'noeviction';

/**
 * What `/readyz` and `serve` say when Redis may evict the limiter's keys under memory pressure:
 * `undefined` when every server (each master of a cluster) answers `maxmemory-policy noeviction`,
 * else a warning naming the policies found. `CONFIG` may be renamed or disabled (managed Redis)
 * or slow: that server's policy is then "unknown", said so in the warning, never an error. Each
 * `CONFIG GET` waits `ms` at most; the masters are asked side by side.
 */
export async function redisEvictionWarning(redis: Redis | Cluster, ms: number): Promise<string | undefined> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const policies = await Promise.all(
    servers.map(async (server) => {
      try {
        const reply = await withDeadline(server.config('GET', 'maxmemory-policy'), ms, 'CONFIG GET timed out');
        const value = (reply as unknown[])[1];
        return typeof value === 'string' && value !== '' ? value : 'unknown';
      } catch {
        return 'unknown';
      }
    }),
  );
  if (policies.length === 0) policies.push('unknown'); // a cluster whose masters are not known yet
  const unsafe = policies.filter((policy) => policy !== SAFE_EVICTION_POLICY);
  if (unsafe.length === 0) return undefined;
  const found = [...new Set(unsafe)].join(', ');
  const where = policies.length > 1 ? ` on ${unsafe.length} of ${policies.length} masters` : '';
  return unsafe.every((policy) => policy === 'unknown')
    ? `maxmemory-policy unknown${where} (CONFIG GET refused or timed out): unless it is noeviction, Redis may evict limiter keys (bans, counts, quotas) when full`
    : `maxmemory-policy ${found}${where}: Redis may evict limiter keys (bans, counts, quotas) when full; set noeviction`;
}

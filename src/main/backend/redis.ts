/**
 * Redis (one server or a Cluster) backs what every instance shares: the limiter's logs and bans
 * (behind the breaker, whose fallback counts in process), the risk event store, the change and
 * wake buses, lease locks, the due index, the worker roster and the live caches' shared tier.
 */
import { DegradingFrequencyGate } from '../../admission/adapters/frequency-gate.js';
import { isQuotaSubject, isRiskSubject, subjectTenant } from '../../admission/subjects.js';
import { CHANNELS } from '../../core/channels.js';
import { RedisDueIndex } from '../../delivery/due-index/index.js';
import { WorkerRoster } from '../../delivery/roster.js';
import { RedisChangeBus } from '../../infra/change-bus.js';
import { createRedisLockFactory } from '../../infra/lock/index.js';
import { createRedisClient, redisEvictionWarning, redisReadiness } from '../../infra/redis-client.js';
import { SlowCallLog } from '../../infra/slow-call-log.js';
import { ThrottledLog } from '../../infra/throttled-log.js';
import { DegradingLimiter, EventLoopLag } from '../../limiter/degrade/index.js';
import {
  DegradingEventStore,
  type FallbackMode,
  Limiter,
  MemoryEventStore,
  MemoryStore,
  RedisEventStore,
  RedisStore,
  TokenLeases,
} from '../../limiter/index.js';
import { recordDegradationEvent } from '../../metrics/index.js';
import type { Backend, BackendContext } from './types.js';

/** How long `/readyz` waits for Redis's PONG before it reports Redis unreachable. */
const READY_PING_MS = 250;
/** The longest a start waits for each Redis server's `CONFIG GET maxmemory-policy`. */
const EVICTION_CHECK_MS = 1000;
/** The longest a start waits for its warm-up look at Redis. */
const WARM_UP_MS = 1000;

export function redisBackend({ settings, clock, logger, metrics, keySecret }: BackendContext): Backend {
  // One line per 10 s of outage and one when it ends, not ioredis's line per reconnect attempt.
  // The error's message, not its stack: the same stack every 10 s of an outage tells nothing.
  const redisErrors = new ThrottledLog<{ error: string }>(
    (fields) => logger.warn(fields, 'Redis connection error; reconnecting (decisions use the fallback meanwhile)'),
    clock,
  );
  let redisDown = false;
  const client = createRedisClient(settings, {
    onError: (error) => {
      redisDown = true;
      redisErrors.record({ error: error.message });
    },
    onReady: () => {
      if (redisDown) logger.info('Redis connection restored');
      redisDown = false;
    },
  });
  if (!client) throw new Error('the Redis backend needs SLUICE_REDIS_URL or SLUICE_REDIS_CLUSTER_NODES');
  const prefix = settings.redisKeyPrefix;
  const closers: (() => Promise<unknown> | unknown)[] = [() => client.quit().catch(() => client.disconnect())];
  const configBus = new RedisChangeBus(client, `${prefix}config`);
  closers.unshift(() => configBus.close());
  // Made at first use: a CLI command never wakes a dispatcher, and the bus holds a connection.
  let wakeBus: RedisChangeBus | undefined;

  const memory = new MemoryStore({ clock, maxSubjects: settings.limiterMemoryMax, ownerOf: subjectTenant, pinned: isQuotaSubject });
  metrics.setLimiterMemory(() => ({ subjects: memory.size, evictedLive: memory.evictedLive }));
  const local = new Limiter({ store: memory });
  const cacheLookup = (cache: 'ban' | 'lease') => (result: 'hit' | 'miss') => metrics.limiterCacheLookups.inc({ cache, result });
  const limiter = new Limiter({
    store: new RedisStore({
      client,
      keySecret,
      prefix: `${prefix}limiter`,
      packedLogMax: settings.limiterPackedLogMax,
      ...(settings.redisSlotGroups > 0 ? { slotGroups: settings.redisSlotGroups } : {}),
    }),
    // Bans answered in process; dropped everywhere by the bus (below). Sluice's request ids are
    // message ids made per request, never retried; a risk check's are the tenant's own.
    banCache:
      settings.banCacheMs > 0
        ? {
            maxTtlMs: settings.banCacheMs,
            ownerOf: subjectTenant,
            answerRequestIds: (subject) => !isRiskSubject(subject),
            clock,
            onLookup: cacheLookup('ban'),
          }
        : false,
    // Tenant QPS rules are `lease: true` (quota.ts): blocks leased from Redis, spent here.
    ...(settings.limiterLeaseMs > 0
      ? {
          leases: new TokenLeases({
            client,
            keySecret,
            prefix: `${prefix}limiter:lease`,
            leaseMs: settings.limiterLeaseMs,
            clock,
            onLookup: cacheLookup('lease'),
          }),
        }
      : {}),
  });
  closers.unshift(() => limiter.close());
  // An unban or reset (`bans:<tenant>`) or a tenant's rule change (`tenant:<id>`) anywhere drops
  // that tenant's cached bans; '*' (announcements may have been missed) drops all.
  closers.unshift(
    configBus.subscribe((key) => {
      if (key === '*') limiter.invalidate();
      else if (key.startsWith('tenant:')) limiter.invalidateOwner(key.slice('tenant:'.length));
      else if (key.startsWith('bans:')) limiter.invalidateOwner(key.slice('bans:'.length));
    }),
  );
  // The breaker judges Redis by what Redis adds: this process's own loop lag is taken off.
  const loopLag = new EventLoopLag();
  closers.unshift(() => loopLag.close());
  const slowCalls = new SlowCallLog((summary) => logger.warn(summary, 'slow Redis limiter calls'), clock);
  const degrading = new DegradingLimiter({
    primary: limiter,
    local,
    policy: { mode: settings.fallbackMode as FallbackMode, divideBy: settings.fallbackDivideBy, sampleRate: settings.sampleRate },
    breaker: { degradeMs: settings.degradeMs, alertMs: settings.degradeAlertMs, openMs: settings.breakerOpenMs, loopLag },
    timeoutMs: settings.redisTimeoutMs,
    listener: (event) => {
      recordDegradationEvent(metrics, event);
      if (event.type === 'state') logger.warn({ from: event.from, to: event.to }, 'limiter breaker changed state');
      if (event.type === 'alert') slowCalls.record(event.ms);
    },
  });
  metrics.setBreakerState(() => degrading.state());

  // The driver's own text (host names, addresses) goes to the log, once per 10 s of trouble.
  const readinessErrors = new ThrottledLog<{ err: unknown }>(
    (fields) => logger.warn({ ...fields, check: 'redis' }, 'readiness check failed'),
    clock,
  );
  const localRiskEvents = new MemoryEventStore({
    clock,
    keySecret,
    maxSubjects: settings.limiterMemoryMax,
    maxBytes: settings.riskMemoryMaxBytes,
  });
  const locks = createRedisLockFactory({ client, leaseMs: settings.leaseMs, keyPrefix: prefix });

  return {
    kind: client.isCluster ? 'redis-cluster' : 'redis',
    limiter,
    sharedLimiter: limiter,
    memoryStore: undefined,
    degrading,
    resilientLimiter: degrading,
    frequency: new DegradingFrequencyGate(degrading, { divideBy: settings.fallbackDivideBy, sampleRate: settings.sampleRate }),
    riskEvents: new DegradingEventStore({
      primary: new RedisEventStore({ client, keySecret, prefix: `${prefix}risk` }),
      local: localRiskEvents,
      breaker: degrading.breaker,
      mode: settings.fallbackMode as FallbackMode,
      timeoutMs: settings.redisTimeoutMs,
    }),
    localRiskEvents,
    configBus,
    get wakeBus() {
      if (!wakeBus) {
        const bus = new RedisChangeBus(client, `${prefix}due`);
        closers.unshift(() => bus.close());
        wakeBus = bus;
      }
      return wakeBus;
    },
    locks,
    sharedLocks: locks,
    dueIndex: new RedisDueIndex({ client, keyPrefix: prefix }),
    cacheTier: client,
    roster: (partitions) =>
      new WorkerRoster({
        client,
        keyPrefix: prefix,
        partitions: CHANNELS.length * partitions,
        leaseMs: settings.leaseMs,
        logger,
      }),
    probes: [
      {
        // Shown, not judged: while Redis is away decisions go on in the fallback (DESIGN §7), so
        // taking every instance out of the load balancer would turn a degraded service into none.
        // An evicting policy is a warning, not a failure: the instance serves correctly until
        // Redis is full, and every instance would fail alike (docs/operations.md).
        name: 'redis',
        check: () =>
          Promise.all([redisReadiness(client, READY_PING_MS), redisEvictionWarning(client, READY_PING_MS)]).then(
            ([detail, warning]) => ({ ok: true, detail, ...(warning ? { warning } : {}) }),
            (error: unknown) => {
              readinessErrors.record({ err: error });
              return { ok: true, detail: 'unreachable (see the log): decisions use the fallback' };
            },
          ),
      },
      { name: 'limiter', check: async () => ({ ok: true, detail: `breaker ${degrading.state()}` }) },
    ],
    async startupWarnings() {
      // Unreachable at start: said once, plainly, rather than as a stack and a policy "unknown".
      try {
        await redisReadiness(client, EVICTION_CHECK_MS);
      } catch {
        return [
          'Redis is unreachable: frequency rules, quotas and pacing use their fallback (SLUICE_FALLBACK_MODE) until it answers; sluice keeps reconnecting, and logs its connection errors at most once per 10 s with the count held back (repeated)',
        ];
      }
      // Redis evicting limiter keys when full would lift bans and reset counts without a word.
      const warning = await redisEvictionWarning(client, EVICTION_CHECK_MS);
      return warning ? [warning] : [];
    },
    async warmUp() {
      // The first decision pays for the connection and the script's load (NOSCRIPT, then EVAL):
      // paid by a burst of requests, that opened the breaker on every start. Bounded: a Cluster
      // that is not up queues commands with no timeout of their own.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        limiter.peek({ subject: 'sluice:warm-up', rules: [{ windowMs: 1000, limit: 1 }] }).catch(() => undefined),
        new Promise((resolve) => {
          timer = setTimeout(resolve, WARM_UP_MS);
        }),
      ]);
      clearTimeout(timer);
    },
    async close() {
      for (const close of closers) {
        try {
          await close();
        } catch (error) {
          logger.warn({ err: error }, 'error while closing');
        }
      }
    },
  };
}

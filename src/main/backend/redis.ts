/**
 * Redis (one server or a Cluster) backs what every instance shares: the limiter's logs and bans
 * (behind the breaker, whose fallback counts in process), the risk event store, the change and
 * wake buses, lease locks, the due index, the worker roster and the live caches' shared tier.
 */
import { DegradingFrequencyGate } from '../../admission/adapters/frequency-gate.js';
import { CHANNELS } from '../../core/channels.js';
import { RedisDueIndex } from '../../delivery/due-index/index.js';
import { WorkerRoster } from '../../delivery/roster.js';
import { RedisChangeBus } from '../../infra/change-bus.js';
import { createRedisLockFactory } from '../../infra/lock/index.js';
import { createRedisClient, type RedisTarget, redisEvictionWarning, redisReadiness } from '../../infra/redis-client.js';
import { ThrottledLog } from '../../infra/throttled-log.js';
import { DegradingEventStore, type FallbackMode, RedisEventStore } from '../../limiter/index.js';
import { brokerPart } from './broker.js';
import { inProcessStores } from './in-process.js';
import { redisLimiter } from './redis-limiter.js';
import type { BackendContext, RedisBackend } from './types.js';

/** How long `/readyz` waits for Redis's PONG before it reports Redis unreachable. */
const READY_PING_MS = 250;
/** The longest a start waits for each Redis server's `CONFIG GET maxmemory-policy`. */
const EVICTION_CHECK_MS = 1000;
/** The longest a start waits for its warm-up look at Redis. */
const WARM_UP_MS = 1000;

export function redisBackend(context: BackendContext, target: RedisTarget): RedisBackend {
  const { settings, clock, logger, keySecret } = context;
  // One line per 10 s of outage and one when it ends, not ioredis's line per reconnect attempt.
  // The error's message, not its stack: the same stack every 10 s of an outage tells nothing.
  const redisErrors = new ThrottledLog<{ error: string }>(
    (fields) => logger.warn(fields, 'Redis connection error; reconnecting (decisions use the fallback meanwhile)'),
    clock,
  );
  let redisDown = false;
  const client = createRedisClient(target, settings.redisCommandTimeoutMs, {
    onError: (error) => {
      redisDown = true;
      redisErrors.record({ error: error.message });
    },
    onReady: () => {
      if (redisDown) logger.info('Redis connection restored');
      redisDown = false;
    },
  });
  const prefix = settings.redisKeyPrefix;
  const closers: (() => Promise<unknown> | unknown)[] = [() => client.quit().catch(() => client.disconnect())];
  const configBus = new RedisChangeBus(client, `${prefix}config`);
  closers.unshift(() => configBus.close());
  // Made at first use: a CLI command never wakes a dispatcher, and the bus holds a connection.
  let wakeBus: RedisChangeBus | undefined;

  const { local, localRiskEvents } = inProcessStores(context);
  const { limiter, degrading } = redisLimiter(context, client, configBus, local, closers);

  // The driver's own text (host names, addresses) goes to the log, once per 10 s of trouble.
  const readinessErrors = new ThrottledLog<{ err: unknown }>(
    (fields) => logger.warn({ ...fields, check: 'redis' }, 'readiness check failed'),
    clock,
  );
  const locks = createRedisLockFactory({ client, leaseMs: settings.leaseMs, keyPrefix: prefix });
  // Closed first: its consumers' last acks before Redis and the buses go.
  const broker = brokerPart(context);
  closers.unshift(() => broker.close());

  return {
    kind: target.kind,
    limiter,
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
    dueIndex: new RedisDueIndex({ client, keyPrefix: prefix }),
    cacheTier: client,
    roster: (partitions) =>
      new WorkerRoster({ client, keyPrefix: prefix, partitions: CHANNELS.length * partitions, leaseMs: settings.leaseMs, logger }),
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
              // Not ok, and said so; the warning keeps the instance ready (see above).
              return {
                ok: false,
                detail: 'unreachable (see the log)',
                warning: 'frequency rules, quotas and pacing use their fallback (SLUICE_FALLBACK_MODE) until Redis answers',
              };
            },
          ),
      },
      { name: 'limiter', check: async () => ({ ok: true, detail: `breaker ${degrading.state()}` }) },
      ...broker.probes,
    ],
    broker: broker.axis,
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

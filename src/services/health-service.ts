/**
 * `/readyz`: the database (a ping and the migrations table), Redis and the limiter's breaker, each
 * bounded so a frozen database and a frozen Redis together still answer within a probe's usual
 * 1 s. It answers anyone who can reach the port: what is wrong is said in fixed words, and the
 * driver's own text (host names, addresses) goes to the log, once per 10 s of trouble.
 */
import type { Cluster, Redis } from 'ioredis';
import { withDeadline } from '../core/deadline.js';
import { redisEvictionWarning, redisReadiness } from '../infra/redis-client.js';
import type { ThrottledLog } from '../infra/throttled-log.js';
import type { Database } from '../storage/database.js';
import { pendingMigrations } from '../storage/migrations/index.js';
import type { HealthService } from './contracts.js';

/** How long `/readyz` waits for Redis's PONG before it reports Redis unreachable. */
const READY_PING_MS = 250;
/** The database check of /readyz (a ping and the migrations table): within a probe's usual 1 s. */
const READY_DATABASE_MS = 800;

export interface HealthServiceDeps {
  database: Database;
  redis: Redis | Cluster | undefined;
  /** The limiter breaker's state, when Redis is configured. */
  breakerState?(): string;
  /** Where failed checks are told, with the driver's error. */
  errors: ThrottledLog<{ err: unknown; check: string }>;
}

type Checks = Awaited<ReturnType<HealthService['ready']>>['checks'];

export class ReadinessService implements HealthService {
  constructor(private readonly deps: HealthServiceDeps) {}

  async ready(): ReturnType<HealthService['ready']> {
    const { database, redis, errors } = this.deps;
    const checks: Checks = {};
    const databaseCheck = withDeadline(
      database.ping().then(() => pendingMigrations(database)),
      READY_DATABASE_MS,
      'database check timed out',
    ).then(
      (pending) => {
        checks.database = { ok: true };
        checks.migrations = pending.length ? { ok: false, detail: `pending: ${pending.join(', ')}` } : { ok: true };
      },
      (error: unknown) => {
        checks.database = { ok: false, detail: 'unreachable (see the log)' };
        errors.record({ err: error, check: 'database' });
      },
    );
    // Shown, not judged: while Redis is away decisions go on in the fallback (DESIGN §7), so
    // taking every instance out of the load balancer would turn a degraded service into none.
    // An evicting policy is a warning, not a failure: the instance serves correctly until
    // Redis is full, and every instance would fail alike (docs/operations.md).
    const redisCheck = redis
      ? Promise.all([redisReadiness(redis, READY_PING_MS), redisEvictionWarning(redis, READY_PING_MS)]).then(
          ([detail, warning]) => {
            checks.redis = { ok: true, detail, ...(warning ? { warning } : {}) };
          },
          (error: unknown) => {
            checks.redis = { ok: true, detail: 'unreachable (see the log): decisions use the fallback' };
            errors.record({ err: error, check: 'redis' });
          },
        )
      : undefined;
    await Promise.all([databaseCheck, redisCheck]);
    checks.limiter = redis
      ? { ok: true, detail: `breaker ${this.deps.breakerState?.() ?? 'closed'}` }
      : { ok: true, detail: 'in process (embedded)' };
    return { ready: Object.values(checks).every((check) => check.ok), checks };
  }
}

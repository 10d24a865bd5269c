/**
 * `/readyz`: the database (a ping and the migrations table) and the backend's probes (Redis, the
 * limiter's breaker), each bounded so a frozen database and a frozen Redis together still answer
 * within a probe's usual 1 s. It answers anyone who can reach the port: what is wrong is said in fixed words, and the
 * driver's own text (host names, addresses) goes to the log, once per 10 s of trouble.
 */
import { withDeadline } from '../core/deadline.js';
import type { ThrottledLog } from '../infra/throttled-log.js';
import type { Database } from '../storage/database.js';
import { pendingMigrations } from '../storage/migrations/index.js';
import type { HealthService } from './contracts.js';

/** The database check of /readyz (a ping and the migrations table): within a probe's usual 1 s. */
const READY_DATABASE_MS = 800;

/** One check `/readyz` shows beside the database: `ok` false makes the instance unready. */
export interface ReadinessProbe {
  readonly name: string;
  check(): Promise<{ ok: boolean; detail?: string; warning?: string }>;
}

export interface HealthServiceDeps {
  database: Database;
  /** What else `/readyz` shows: the backend's checks (Redis, the limiter), each bounded by its own deadline. */
  probes: readonly ReadinessProbe[];
  /** Where failed checks are told, with the driver's error. */
  errors: ThrottledLog<{ err: unknown; check: string }>;
}

type Checks = Awaited<ReturnType<HealthService['ready']>>['checks'];

export class ReadinessService implements HealthService {
  constructor(private readonly deps: HealthServiceDeps) {}

  async ready(): ReturnType<HealthService['ready']> {
    const { database, errors } = this.deps;
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
    const probes = this.deps.probes.map(async (probe) => {
      checks[probe.name] = await probe.check();
    });
    await Promise.all([databaseCheck, ...probes]);
    // A failed check with a warning (Redis away: the fallback decides) is shown, and keeps the instance ready.
    return { ready: Object.values(checks).every((check) => check.ok || check.warning !== undefined), checks };
  }
}

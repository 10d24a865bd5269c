/** The backend's contract: what every kind of backend provides (the switch is `backend.ts`). */
import type { Logger } from 'pino';
import type { FrequencyGate } from '../../admission/ports.js';
import type { MessageBroker } from '../../broker/port.js';
import type { DueIndex } from '../../delivery/due-index/index.js';
import type { WorkerRoster } from '../../delivery/roster.js';
import type { ChangeBus } from '../../infra/change-bus.js';
import type { LiveCacheOptions } from '../../infra/live-cache.js';
import type { LockFactory } from '../../infra/lock/index.js';
import type { ChangeLog } from '../../infra/shared-log-change-bus.js';
import type { Clock, DegradingLimiter, EventApplier, Limiter, MemoryEventStore, MemoryStore } from '../../limiter/index.js';
import type { Metrics } from '../../metrics/index.js';
import type { ReadinessProbe } from '../../services/health-service.js';
import type { Settings } from '../../settings/settings.js';

/** What a backend is built from. */
export interface BackendContext {
  settings: Settings;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Keys the hashes of recipients and other tenant data in store keys (derived from the master key). */
  keySecret: Buffer;
  /**
   * The database's change log (0022): without Redis, the config bus of the processes that share
   * the database (the CLI, other instances). Absent: the bus is this process alone.
   */
  changeLog?: ChangeLog;
}

export interface Backend {
  /** What the counts, locks and index live in: `embedded` means this process alone. */
  readonly kind: 'embedded' | 'redis' | 'redis-cluster';
  /** The limiter decisions go to: Redis (behind the breaker's fallback), or in process. */
  readonly limiter: Limiter;
  /** {@link limiter} when every instance shares it (Redis); undefined embedded. */
  readonly sharedLimiter: Limiter | undefined;
  /** The in-process store {@link limiter} decides with, whose state a restart keeps (snapshots); undefined with Redis. */
  readonly memoryStore: MemoryStore | undefined;
  /** The limiter behind its breaker; undefined embedded, where nothing can degrade. */
  readonly degrading: DegradingLimiter | undefined;
  /** {@link limiter} behind its breaker's fallback when it has one (quotas, risk windows). */
  readonly resilientLimiter: Limiter | DegradingLimiter;
  /** The admission chain's frequency gate over {@link limiter}. */
  readonly frequency: FrequencyGate;
  /** Where the risk engine's event rules (last N, distinct, seen, one-call checks) are kept. */
  readonly riskEvents: EventApplier;
  /** The in-process risk event store (the fallback of {@link riskEvents}, or the store itself). */
  readonly localRiskEvents: MemoryEventStore;
  /** Config changes announced to every instance (`tenant:<id>`, `apikey:<hash>`, `bans:<tenant>`...). */
  readonly configBus: ChangeBus;
  /** Wakes for the dispatchers, from whichever instance accepted a message. */
  readonly wakeBus: ChangeBus;
  /** Lease locks: shared by every instance, or in process. */
  readonly locks: LockFactory;
  /** Lease locks other instances see too; undefined when this process is the only one. */
  readonly sharedLocks: LockFactory | undefined;
  /** The due index the feed adds to and the dispatchers claim from; undefined: claims are SQL queries. */
  readonly dueIndex: DueIndex | undefined;
  /** The shared tier of the live caches (Redis), between the process's copy and SQL. */
  readonly cacheTier: LiveCacheOptions<unknown>['redis'];
  /**
   * A roster sharing `partitions` among the worker instances; undefined: this worker holds them
   * all, or the broker is on (its consumers are the membership; docs/operations.md, "Brokers").
   */
  roster(partitions: number): WorkerRoster | undefined;
  /**
   * The hand-off of due messages and the status events bus (SLUICE_BROKER_URL: NATS JetStream),
   * made at first use; undefined without a broker.
   */
  readonly broker: MessageBroker | undefined;
  /** What `/readyz` shows of the backend, beside the database. */
  readonly probes: readonly ReadinessProbe[];
  /**
   * Words for the log at start, one per thing an operator should change. `sharedDatabase`: the
   * database is a server other instances may use too (not a SQLite file).
   */
  startupWarnings(sharedDatabase: boolean): Promise<string[]>;
  /** Pays the first decision's connection and script load before traffic does (bounded). */
  warmUp(): Promise<void>;
  /** Closes what the backend opened, last first. */
  close(): Promise<void>;
}

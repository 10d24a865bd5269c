/** The backend's contract: what every kind of backend provides (the switch is `backend.ts`). */
import type { Logger } from 'pino';
import type { FrequencyGate } from '../../admission/ports.js';
import type { MessageBroker } from '../../broker/port.js';
import type { DueIndex } from '../../delivery/due-index/index.js';
import type { WorkerRoster } from '../../delivery/roster.js';
import type { ChangeBus } from '../../infra/change-bus.js';
import type { LiveCacheOptions } from '../../infra/live-cache.js';
import type { LockFactory } from '../../infra/lock/index.js';
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
}

/**
 * The second axis, apart from the backend's kind: the hand-off of due messages and the status
 * events bus. `none` without SLUICE_BROKER_URL; `jetstream` (NATS JetStream) with it, its port
 * made at first use (a CLI command never connects).
 */
export type BrokerAxis = { readonly kind: 'none' } | { readonly kind: 'jetstream'; readonly port: MessageBroker };

/** What every kind of backend provides. */
interface BackendBase {
  /** The limiter decisions go to: Redis (behind the breaker's fallback), or in process. */
  readonly limiter: Limiter;
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
  /** Lease locks: shared by every instance (Redis), or in process (embedded). */
  readonly locks: LockFactory;
  /** The broker axis (docs/operations.md, "Brokers"). */
  readonly broker: BrokerAxis;
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

/**
 * The embedded default: this process alone holds the counts, locks and wakes. Nothing degrades,
 * and the dispatchers find due messages with SQL queries (no due index, no roster).
 */
export interface EmbeddedBackend extends BackendBase {
  readonly kind: 'embedded';
  /** The in-process store {@link limiter} decides with, whose state a restart keeps (snapshots). */
  readonly memoryStore: MemoryStore;
}

/** Redis, one server or a Cluster: what every instance shares. */
export interface RedisBackend extends BackendBase {
  readonly kind: 'redis' | 'redis-cluster';
  /** The limiter behind its breaker (the same as {@link resilientLimiter}). */
  readonly degrading: DegradingLimiter;
  /** The due index the feed adds to and the dispatchers claim from. */
  readonly dueIndex: DueIndex;
  /** The shared tier of the live caches, between the process's copy and SQL. */
  readonly cacheTier: NonNullable<LiveCacheOptions<unknown>['redis']>;
  /**
   * A roster sharing `partitions` among the worker instances; only with the broker axis `none`
   * (with a broker its consumers are the membership; docs/operations.md, "Brokers").
   */
  roster(partitions: number): WorkerRoster;
}

/**
 * What backs the shared state, keyed on `kind`: code that needs a Redis part narrows to
 * {@link RedisBackend}; no member is left undefined to stand for a mode.
 */
export type Backend = EmbeddedBackend | RedisBackend;

/**
 * Builds a running sluice from settings, one small factory per wing: storage (the database,
 * migrated, and its repositories), the backend (embedded, Redis or Redis Cluster: the one
 * switch, `backend/backend.ts`), the config caches, the services (with the admission chain) and
 * the HTTP deps. `serve`, the CLI and the tests wire sluice the same way; the roles (`api.ts`,
 * `worker.ts`, `due-feed.ts`) then receive what they use, never the runtime.
 */
import type { Logger } from 'pino';
import type { CachedTenantDirectory } from '../admission/adapters/tenant-directory.js';
import type { AdmissionOutcome } from '../admission/context.js';
import type { NewMessage } from '../admission/ports.js';
import type { HttpDeps } from '../http/deps.js';
import type { HostResolver } from '../infra/host-resolver.js';
import { createLogger } from '../infra/logging.js';
import { type Clock, systemClock } from '../limiter/index.js';
import { Metrics } from '../metrics/index.js';
import type { Services } from '../services/contracts.js';
import type { Settings } from '../settings/settings.js';
import type { Database } from '../storage/database.js';
import { type Backend, createBackend } from './backend/backend.js';
import { brokerConfigured } from './backend/broker.js';
import { CloseStack } from './close-stack.js';
import { httpDeps } from './http-deps.js';
import { once } from './lazily.js';
import { createConfigCaches } from './wiring/admission.js';
import { createServices } from './wiring/services.js';
import { openStorage, type Repositories } from './wiring/storage.js';

export interface RuntimeOptions {
  clock?: Clock;
  logger?: Logger;
  /** Default true: apply pending migrations on start. */
  migrate?: boolean;
  /** The database must exist with sluice's tables (CLI commands); default false: create it. */
  requireSchema?: boolean;
  metrics?: Metrics;
}

export interface Runtime {
  readonly settings: Settings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly database: Database;
  readonly repositories: Repositories;
  /** What backs the shared state: the limiter, locks, buses, due index and roster. */
  readonly backend: Backend;
  readonly directory: CachedTenantDirectory;
  /** Resolves the hosts tenants control (webhook endpoints, their providers): bounded, off the thread pool. */
  readonly resolver: HostResolver;
  /** What the entry points call: the HTTP routes (through `http`) and the CLI. */
  readonly services: Services;
  readonly http: HttpDeps;
  /** Pays before traffic what the first requests would: the blacklist's load, the limiter's connection and script (bounded). */
  warmUp(): Promise<void>;
  /** Called for every accepted message, after commit (the due feed subscribes). */
  onAccepted(listener: (message: NewMessage, outcome: AdmissionOutcome) => void): void;
  /**
   * Called for every config change announced by any instance, after its commit: `tenant:<id>`,
   * `apikey:<hash>`, ...; `'*'` when announcements may have been missed. Returns the unsubscribe.
   */
  onConfigChange(listener: (key: string) => void): () => void;
  close(): Promise<void>;
}

export async function createRuntime(settings: Settings, options: RuntimeOptions = {}): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(settings.logLevel, settings.logFormat);
  const metrics = options.metrics ?? new Metrics();
  const storage = await openStorage(settings, {
    clock,
    logger,
    migrate: options.migrate ?? true,
    busEvents: brokerConfigured(settings) && settings.brokerEvents,
    requireSchema: options.requireSchema ?? false,
  });
  const closers = new CloseStack();
  closers.push(() => storage.close());
  try {
    const backend = createBackend({ settings, clock, logger, metrics, keySecret: storage.keySecret });
    closers.push(() => backend.close());
    const context = { settings, clock, logger, metrics, backend, storage, closers };
    const caches = createConfigCaches(context);
    const { services, resolver, onAccepted } = createServices(context, caches);
    const http = once(() =>
      httpDeps({
        settings,
        services,
        directory: caches.directory,
        metrics,
        clock,
        logger,
        sharedLimiter: backend.kind === 'embedded' ? undefined : backend.limiter,
      }),
    );
    return {
      settings,
      clock,
      logger,
      metrics,
      database: storage.database,
      repositories: storage.repositories,
      backend,
      directory: caches.directory,
      get resolver() {
        return resolver();
      },
      services,
      get http() {
        return http();
      },
      async warmUp() {
        await Promise.all([caches.blacklist().reload(), backend.warmUp()]);
      },
      onAccepted,
      onConfigChange: (listener) => backend.configBus.subscribe(listener),
      close: () => closers.close((error) => logger.warn({ err: error }, 'error while closing')),
    };
  } catch (error) {
    await closers.close();
    throw error;
  }
}

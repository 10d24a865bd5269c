/**
 * The admission wing: the live caches admission reads (API keys, tenants, templates, quiet hours,
 * blacklists: process → the backend's shared tier → SQL, dropped everywhere by the change bus),
 * and the admission chain over them and the backend's limiter.
 */
import type { Logger } from 'pino';
import { BLACKLIST_CHANGED, BlacklistCache } from '../../admission/adapters/blacklist-cache.js';
import { CachedFraudPolicies, loadFraudPolicy, loadPrices, SqlSpendLedger } from '../../admission/adapters/fraud-directory.js';
import { LockingIdempotencyGuard } from '../../admission/adapters/idempotency-guard.js';
import { CachedQuietHours, CachedTemplates, loadQuietHours, loadTemplate } from '../../admission/adapters/template-directory.js';
import {
  CachedTenantDirectory,
  loadTenantConfig,
  loadTenantIdByKeyHash,
  type TenantConfig,
} from '../../admission/adapters/tenant-directory.js';
import type { AdmissionChain } from '../../admission/chain.js';
import { defaultChain } from '../../admission/default-chain.js';
import type { FraudPolicy, SmsPrices } from '../../admission/fraud-policy.js';
import type { FraudDeps } from '../../admission/interceptors/fraud.js';
import type { QuotaCounter } from '../../admission/interceptors/quota.js';
import type { FraudLimiter, MessageWriter } from '../../admission/ports.js';
import type { QuietHours } from '../../admission/quiet-hours.js';
import type { StoredShapes } from '../../admission/stored-shapes.js';
import type { StoredTemplate } from '../../admission/templates.js';
import { LiveCache, type LiveCacheOptions } from '../../infra/live-cache.js';
import { ThrottledLog } from '../../infra/throttled-log.js';
import type { Clock } from '../../limiter/index.js';
import type { Metrics } from '../../metrics/index.js';
import type { Settings } from '../../settings/settings.js';
import type { Backend } from '../backend/backend.js';
import type { CloseStack } from '../close-stack.js';
import { createStoredShapes } from '../stored-shapes.js';
import type { StorageWing } from './storage.js';

/** The options every live cache of a process shares: its TTL, the bus, the shared tier, the metric. */
export type CacheOptions = Omit<LiveCacheOptions<unknown>, 'name' | 'load'>;

export interface ConfigCaches {
  options: CacheOptions;
  directory: CachedTenantDirectory;
  tenantConfigs: LiveCache<TenantConfig>;
  templates: CachedTemplates;
  quietHours: CachedQuietHours;
  /** SMS pumping protection's policies and prices. */
  fraud: CachedFraudPolicies;
  /** The checks of stored JSON, shared by the caches' loaders and the admin services (one log per bad row). */
  shapes: StoredShapes;
  /** Built at first use: it loads the whole table and checks it against SQL every few seconds. */
  blacklist(): BlacklistCache;
  /** After a change to a blacklist: reloads this instance's copy (when it has one), then tells the others. */
  blacklistChanged(): Promise<void>;
}

interface WingContext {
  settings: Settings;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  backend: Backend;
  storage: StorageWing;
  closers: CloseStack;
}

export function createConfigCaches({ settings, clock, logger, metrics, backend, storage, closers }: WingContext): ConfigCaches {
  const { repositories, database } = storage;
  const invalidationErrors = new ThrottledLog<{ err: unknown; key: string }>(
    (fields) => logger.warn(fields, 'a config change is saved but could not be announced through Redis; retried every second'),
    clock,
  );
  const options: CacheOptions = {
    localTtlMs: settings.configCacheMs,
    clock,
    bus: backend.configBus,
    stats: { lookup: (level, result) => metrics.configCacheLookups.inc({ level, result }) },
    keyPrefix: settings.redisKeyPrefix,
    onInvalidateError: (error, key) => invalidationErrors.record({ err: error, key }),
    // A CLI command ends right after its change: "retried every second" is then not so.
    onUnannounced: (keys) =>
      logger.warn(
        { keys: keys.length },
        'a config change is saved but this process ends before Redis could announce it: running instances apply it when their cached copies expire, within about a minute',
      ),
    maxEntries: 100_000,
    ...(backend.kind === 'embedded' ? {} : { redis: backend.cacheTier }),
  };
  const apiKeys = new LiveCache<string>({ ...options, name: 'apikey', load: (hash) => loadTenantIdByKeyHash(database, hash) });
  const tenantConfigs = new LiveCache<TenantConfig>({
    ...options,
    name: 'tenant',
    load: (id) => loadTenantConfig(repositories.tenants, repositories.rules, id),
  });
  const shapes = createStoredShapes(logger);
  const templates = new CachedTemplates(
    new LiveCache<StoredTemplate>({ ...options, name: 'template', load: (key) => loadTemplate(repositories.templates, shapes, key) }),
  );
  const quietHours = new CachedQuietHours(
    new LiveCache<QuietHours>({ ...options, name: 'quiet', load: (key) => loadQuietHours(repositories.quietHours, key) }),
  );
  const fraud = new CachedFraudPolicies(
    new LiveCache<FraudPolicy>({ ...options, name: 'fraud', load: (tenantId) => loadFraudPolicy(repositories.fraud, shapes, tenantId) }),
    new LiveCache<SmsPrices>({ ...options, name: 'prices', load: (channel) => loadPrices(repositories.fraud, shapes, channel) }),
  );
  let built: BlacklistCache | undefined;
  const blacklist = () => {
    if (!built) {
      built = new BlacklistCache(repositories.blacklist, backend.configBus, {
        // SLUICE_CONFIG_CACHE_MS=0 turns off every in-process copy of configuration.
        maxEntries: settings.configCacheMs === 0 ? 0 : settings.blacklistMemoryMax,
        refreshMs: settings.configCacheMs,
        onError: (error) =>
          logger.warn(
            { err: error },
            'blacklist reload or change notice failed; the previous copy keeps answering and the periodic check against SQL catches up',
          ),
      });
      // Until its first load ends, the cache asks SQL: correct, only slower.
      void built.reload().catch(() => undefined);
      closers.push(() => built?.close());
    }
    return built;
  };
  closers.push(
    () => apiKeys.close(),
    () => tenantConfigs.close(),
    () => templates.close(),
    () => quietHours.close(),
    () => fraud.close(),
  );
  return {
    options,
    directory: new CachedTenantDirectory(apiKeys, tenantConfigs),
    tenantConfigs,
    templates,
    quietHours,
    fraud,
    shapes,
    blacklist,
    blacklistChanged: () => (built ? built.changed() : backend.configBus.publish(BLACKLIST_CHANGED)),
  };
}

/**
 * The limiter as the fraud step uses it: checks and undos behind the breaker's fallback (as
 * quotas), peeks of confirmations on the store itself (no fallback: they reject while it is away).
 */
export function fraudLimiter(backend: Backend): FraudLimiter {
  const resilient: QuotaCounter = backend.resilientLimiter;
  return {
    check: (request) => resilient.check(request),
    undo: (request) => resilient.undo(request),
    peek: (request) => backend.limiter.peek(request),
  };
}

/** SMS pumping protection's ports: the cached policies, the limiter, the SQL spend ledger, the metric. */
export function fraudDeps(
  { clock, logger, metrics, backend, storage }: Pick<WingContext, 'clock' | 'logger' | 'metrics' | 'backend' | 'storage'>,
  caches: Pick<ConfigCaches, 'fraud'>,
): FraudDeps {
  const tallyErrors = new ThrottledLog<{ err: unknown }>(
    (fields) => logger.warn(fields, "a fraud refusal could not be counted for the console's tallies (the limiter's store failed)"),
    clock,
  );
  return {
    policies: caches.fraud,
    limiter: fraudLimiter(backend),
    spend: new SqlSpendLedger(storage.repositories.smsSpend, clock),
    observer: {
      decided: (rule, outcome, mode) => metrics.fraudDecisions.inc({ rule, outcome, mode }),
      tallyFailed: (error) => tallyErrors.record({ err: error }),
    },
  };
}

/** The admission chain: the default steps over the caches, the backend's limiter and `writer`. */
export function createAdmissionChain(
  { settings, clock, logger, metrics, backend, storage }: Omit<WingContext, 'closers'>,
  caches: ConfigCaches,
  writer: MessageWriter,
): AdmissionChain {
  const idempotencyLockErrors = new ThrottledLog<{ err: unknown }>(
    (fields) =>
      logger.warn(
        fields,
        'Idempotency-Key hold could not be asked of Redis: twins sent to other instances are settled by the unique key alone',
      ),
    clock,
  );
  return defaultChain({
    fraud: fraudDeps({ clock, logger, metrics, backend, storage }, caches),
    directory: caches.directory,
    templates: caches.templates,
    quietHours: caches.quietHours,
    blacklist: caches.blacklist(),
    messages: writer,
    idempotency: new LockingIdempotencyGuard({
      ...(backend.kind === 'embedded' ? {} : { locks: backend.locks }),
      keySecret: storage.keySecret,
      redisTimeoutMs: settings.redisTimeoutMs,
      onLockError: (error) => idempotencyLockErrors.record({ err: error }),
    }),
    quotaLimiter: backend.resilientLimiter,
    frequency: backend.frequency,
    validation: { defaultRegion: settings.defaultRegion, scheduleHorizonMs: settings.scheduleHorizonDays * 86_400_000 },
    onDecision: (channel, decision) =>
      metrics.decisions.inc({ outcome: decision.code, channel, rule: decision.rule === undefined ? 'none' : String(decision.rule) }),
    observer: {
      rejected: (interceptor, code) => metrics.admissionRejections.inc({ interceptor, code }),
      undoFailed: (interceptor, error) =>
        logger.error({ err: error, interceptor }, 'undo failed: a rejected request kept what it consumed'),
    },
  });
}

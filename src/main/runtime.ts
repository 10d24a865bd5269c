/**
 * Builds a running sluice from settings: database (migrated), Redis if configured, limiter stores,
 * live config, the admission chain and the services the HTTP API and the CLI use. One function, so
 * `serve`, the CLI and the tests wire sluice the same way.
 */
import { createHmac } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BlacklistCache } from '../admission/adapters/blacklist-cache.js';
import { DegradingFrequencyGate, LocalFrequencyGate } from '../admission/adapters/frequency-gate.js';
import { LockingIdempotencyGuard } from '../admission/adapters/idempotency-guard.js';
import { AnnouncingMessageWriter } from '../admission/adapters/message-writer.js';
import { CachedQuietHours, CachedTemplates, loadQuietHours, loadTemplate } from '../admission/adapters/template-directory.js';
import {
  CachedTenantDirectory,
  loadTenantConfig,
  loadTenantIdByKeyHash,
  type TenantConfig,
} from '../admission/adapters/tenant-directory.js';
import type { AdmissionOutcome } from '../admission/context.js';
import { defaultChain } from '../admission/default-chain.js';
import { releaseFrequencySlot } from '../admission/interceptors/frequency.js';
import type { FrequencyGate, NewMessage } from '../admission/ports.js';
import type { QuietHours } from '../admission/quiet-hours.js';
import { isQuotaSubject, isRiskSubject, subjectTenant } from '../admission/subjects.js';
import type { StoredTemplate } from '../admission/templates.js';
import { unavailableUnlessSluiceError } from '../core/errors.js';
import { type DueIndex, RedisDueIndex } from '../delivery/due-index/index.js';
import type { HttpDeps } from '../http/deps.js';
import { type ChangeBus, InProcessChangeBus, RedisChangeBus } from '../infra/change-bus.js';
import type { HostResolver } from '../infra/host-resolver.js';
import { LiveCache } from '../infra/live-cache.js';
import { createRedisLockFactory } from '../infra/lock/index.js';
import { createLogger } from '../infra/logging.js';
import { createRedisClient } from '../infra/redis-client.js';
import { resolveSecretKey } from '../infra/secret-key.js';
import { SlowCallLog } from '../infra/slow-call-log.js';
import { ThrottledLog } from '../infra/throttled-log.js';
import { DegradingLimiter, EventLoopLag } from '../limiter/degrade/index.js';
import { type Clock, type FallbackMode, Limiter, MemoryStore, RedisStore, systemClock, TokenLeases } from '../limiter/index.js';
import { Metrics, recordDegradationEvent } from '../metrics/index.js';
import { AdminLookups } from '../services/admin-lookup-service.js';
import type { Services } from '../services/contracts.js';
import { LimiterFrequencyCheckService } from '../services/frequency-check-service.js';
import { ReadinessService } from '../services/health-service.js';
import { AdmittingMessageService } from '../services/message-service.js';
import { ReceiptIntake } from '../services/receipt-service.js';
import { TemplateAdministration } from '../services/template-administration.js';
import type { Settings } from '../settings/settings.js';
import { type Database, openDatabase } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrations/index.js';
import { BlacklistRepository } from '../storage/repositories/blacklist.js';
import { MessagesRepository } from '../storage/repositories/messages.js';
import { ProvidersRepository } from '../storage/repositories/providers.js';
import { QuietHoursRepository } from '../storage/repositories/quiet-hours.js';
import { ReceiptsRepository } from '../storage/repositories/receipts.js';
import { RiskRulesRepository } from '../storage/repositories/risk-rules.js';
import { RulesRepository } from '../storage/repositories/rules.js';
import { TemplatesRepository } from '../storage/repositories/templates.js';
import { TenantsRepository } from '../storage/repositories/tenants.js';
import { WebhookEventsRepository } from '../storage/repositories/webhook-events.js';
import { WebhooksRepository } from '../storage/repositories/webhooks.js';
import { SecretBox } from '../storage/secret-box.js';
import { createAdministration } from './administration.js';
import { httpDeps } from './http-deps.js';
import { createRiskControl } from './risk-control.js';
import { createWebhooks } from './webhooks.js';

export interface RuntimeOptions {
  clock?: Clock;
  logger?: Logger;
  /** Default true: apply pending migrations on start. */
  migrate?: boolean;
  metrics?: Metrics;
}

export interface Runtime {
  readonly settings: Settings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly database: Database;
  readonly redis: Redis | Cluster | undefined;
  readonly repositories: {
    tenants: TenantsRepository;
    rules: RulesRepository;
    riskRules: RiskRulesRepository;
    blacklist: BlacklistRepository;
    providers: ProvidersRepository;
    messages: MessagesRepository;
    templates: TemplatesRepository;
    quietHours: QuietHoursRepository;
    webhooks: WebhooksRepository;
    webhookEvents: WebhookEventsRepository;
    receipts: ReceiptsRepository;
  };
  readonly directory: CachedTenantDirectory;
  /** The limiter holding recipients' logs and bans (Redis, or in process). */
  readonly limiter: Limiter;
  readonly frequency: FrequencyGate;
  readonly degrading: DegradingLimiter | undefined;
  /** The one due index of the process (Redis mode): the API's feed adds to it, the dispatchers claim from it. */
  readonly dueIndex: DueIndex | undefined;
  /** Resolves the hosts tenants control (webhook endpoints, their providers): bounded, off the thread pool. */
  readonly resolver: HostResolver;
  /** What the entry points call: the HTTP routes (through `http`) and the CLI. */
  readonly services: Services;
  readonly http: HttpDeps;
  /** Called for every accepted message, after commit (the dispatchers subscribe). */
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
  // Said aloud: a CLI run from another directory silently made its own key, and sealed a
  // provider's credentials with it that the server could not open.
  const secretKey = resolveSecretKey(settings, (path) =>
    logger.warn(
      { path },
      'created a new secret key, which seals provider credentials: keep it, and give every sluice process of this deployment the same key (this file or SLUICE_SECRET_KEY)',
    ),
  );

  const database = await openDatabase(settings.dbUrl, { sqliteSynchronous: settings.sqliteSynchronous as 'full' | 'normal' });
  const closers: (() => Promise<unknown> | unknown)[] = [() => database.close()];
  try {
    if (options.migrate ?? true) {
      const applied = await migrateToLatest(database, { defaultRegion: settings.defaultRegion });
      if (applied.length) logger.info({ applied, db: database.displayUrl }, 'migrations applied');
    }

    // One line per 10 s of outage and one when it ends, not ioredis's line per reconnect attempt.
    const redisErrors = new ThrottledLog<{ err: Error }>((fields) => logger.warn(fields, 'Redis connection error'), clock);
    let redisDown = false;
    const redis = createRedisClient(settings, {
      onError: (error) => {
        redisDown = true;
        redisErrors.record({ err: error });
      },
      onReady: () => {
        if (redisDown) logger.info('Redis connection restored');
        redisDown = false;
      },
    });
    if (redis) closers.unshift(() => redis.quit().catch(() => redis.disconnect()));
    const bus: ChangeBus = redis ? new RedisChangeBus(redis as Redis, `${settings.redisKeyPrefix}config`) : new InProcessChangeBus();
    closers.unshift(() => bus.close());

    const repositories = {
      tenants: new TenantsRepository(database, { clock }),
      rules: new RulesRepository(database, { clock }),
      riskRules: new RiskRulesRepository(database, { clock }),
      blacklist: new BlacklistRepository(database, { clock }),
      providers: new ProvidersRepository(database, { clock, secretBox: new SecretBox(secretKey) }),
      messages: new MessagesRepository(database),
      templates: new TemplatesRepository(database, { clock }),
      quietHours: new QuietHoursRepository(database, { clock }),
      webhooks: new WebhooksRepository(database, { clock, secretBox: new SecretBox(secretKey) }),
      webhookEvents: new WebhookEventsRepository(database),
      receipts: new ReceiptsRepository(database),
    };
    closers.unshift(() => repositories.messages.drain());

    const stats = {
      lookup: (level: 'local' | 'redis' | 'sql', result: 'hit' | 'miss') => metrics.configCacheLookups.inc({ level, result }),
    };
    const invalidationErrors = new ThrottledLog<{ err: unknown; key: string }>(
      (fields) => logger.warn(fields, 'a config change is saved but could not be announced through Redis; retried every second'),
      clock,
    );
    const cacheOptions = {
      localTtlMs: settings.configCacheMs,
      clock,
      bus,
      stats,
      keyPrefix: settings.redisKeyPrefix,
      onInvalidateError: (error: unknown, key: string) => invalidationErrors.record({ err: error, key }),
      // A CLI command ends right after its change: "retried every second" is then not so.
      onUnannounced: (keys: string[]) =>
        logger.warn(
          { keys: keys.length },
          'a config change is saved but this process ends before Redis could announce it: running instances apply it when their cached copies expire, within about a minute',
        ),
      maxEntries: 100_000,
      ...(redis ? { redis: redis as Redis } : {}),
    };
    const apiKeys = new LiveCache<string>({ ...cacheOptions, name: 'apikey', load: (hash) => loadTenantIdByKeyHash(database, hash) });
    const tenantConfigs = new LiveCache<TenantConfig>({
      ...cacheOptions,
      name: 'tenant',
      load: (id) => loadTenantConfig(repositories.tenants, repositories.rules, id),
    });
    closers.unshift(
      () => apiKeys.close(),
      () => tenantConfigs.close(),
    );
    const directory = new CachedTenantDirectory(apiKeys, tenantConfigs);
    const templates = new CachedTemplates(
      new LiveCache<StoredTemplate>({ ...cacheOptions, name: 'template', load: (key) => loadTemplate(repositories.templates, key) }),
    );
    const quietHours = new CachedQuietHours(
      new LiveCache<QuietHours>({ ...cacheOptions, name: 'quiet', load: (key) => loadQuietHours(repositories.quietHours, key) }),
    );
    closers.unshift(
      () => templates.close(),
      () => quietHours.close(),
    );
    const blacklist = new BlacklistCache(repositories.blacklist, bus, {
      // SLUICE_CONFIG_CACHE_MS=0 turns off every in-process copy of configuration.
      maxEntries: settings.configCacheMs === 0 ? 0 : settings.blacklistMemoryMax,
      refreshMs: settings.configCacheMs,
      onError: (error) =>
        logger.warn(
          { err: error },
          'blacklist reload or change notice failed; the previous copy keeps answering and the periodic check against SQL catches up',
        ),
    });
    closers.unshift(() => blacklist.close());
    await blacklist.reload();

    // Recipient hashes in Redis keys are keyed by a secret derived from (not equal to) the master key.
    const keySecret = createHmac('sha256', secretKey).update('sluice redis key hashing').digest();
    const memory = new MemoryStore({ clock, maxSubjects: settings.limiterMemoryMax, ownerOf: subjectTenant, pinned: isQuotaSubject });
    metrics.setLimiterMemory(() => ({ subjects: memory.size, evictedLive: memory.evictedLive }));
    const local = new Limiter({ store: memory });
    let limiter = local;
    let degrading: DegradingLimiter | undefined;
    let frequency: FrequencyGate = new LocalFrequencyGate(local, (ms, outcome) =>
      Metrics.observeMs(metrics.decisionDuration, { store: 'memory', outcome }, ms),
    );
    if (redis) {
      const slowCalls = new SlowCallLog((summary) => logger.warn(summary, 'slow Redis limiter calls'), clock);
      const cacheLookup = (cache: 'ban' | 'lease') => (result: 'hit' | 'miss') => metrics.limiterCacheLookups.inc({ cache, result });
      limiter = new Limiter({
        store: new RedisStore({
          client: redis,
          keySecret,
          prefix: `${settings.redisKeyPrefix}limiter`,
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
                client: redis,
                keySecret,
                prefix: `${settings.redisKeyPrefix}limiter:lease`,
                leaseMs: settings.limiterLeaseMs,
                clock,
                onLookup: cacheLookup('lease'),
              }),
            }
          : {}),
      });
      const redisLimiter = limiter;
      closers.unshift(() => redisLimiter.close());
      // An unban or reset (`bans:<tenant>`, below) or a tenant's rule change (`tenant:<id>`) anywhere
      // drops that tenant's cached bans; '*' (announcements may have been missed) drops all.
      const unsubscribeBans = bus.subscribe((key) => {
        if (key === '*') redisLimiter.invalidate();
        else if (key.startsWith('tenant:')) redisLimiter.invalidateOwner(key.slice('tenant:'.length));
        else if (key.startsWith('bans:')) redisLimiter.invalidateOwner(key.slice('bans:'.length));
      });
      closers.unshift(unsubscribeBans);
      // The breaker judges Redis by what Redis adds: this process's own loop lag is taken off.
      const loopLag = new EventLoopLag();
      closers.unshift(() => loopLag.close());
      degrading = new DegradingLimiter({
        primary: limiter,
        local,
        policy: { mode: settings.fallbackMode as 'local', divideBy: settings.fallbackDivideBy, sampleRate: settings.sampleRate },
        breaker: { degradeMs: settings.degradeMs, alertMs: settings.degradeAlertMs, openMs: settings.breakerOpenMs, loopLag },
        timeoutMs: settings.redisTimeoutMs,
        listener: (event) => {
          recordDegradationEvent(metrics, event);
          if (event.type === 'state') logger.warn({ from: event.from, to: event.to }, 'limiter breaker changed state');
          if (event.type === 'alert') slowCalls.record(event.ms);
        },
      });
      frequency = new DegradingFrequencyGate(degrading, { divideBy: settings.fallbackDivideBy, sampleRate: settings.sampleRate });
      const breaker = degrading;
      metrics.setBreakerState(() => breaker.state());
    }

    const acceptedListeners: ((message: NewMessage, outcome: AdmissionOutcome) => void)[] = [];
    const writer = new AnnouncingMessageWriter(repositories.messages, settings.maxAttempts, (message, outcome) => {
      for (const listener of acceptedListeners) listener(message, outcome);
    });
    const idempotencyLockErrors = new ThrottledLog<{ err: unknown }>(
      (fields) =>
        logger.warn(
          fields,
          'Idempotency-Key hold could not be asked of Redis: twins sent to other instances are settled by the unique key alone',
        ),
      clock,
    );
    const chain = defaultChain({
      directory,
      templates,
      quietHours,
      blacklist,
      messages: writer,
      idempotency: new LockingIdempotencyGuard({
        ...(redis
          ? { locks: createRedisLockFactory({ client: redis as Redis, leaseMs: settings.leaseMs, keyPrefix: settings.redisKeyPrefix }) }
          : {}),
        keySecret,
        redisTimeoutMs: settings.redisTimeoutMs,
        onLockError: (error) => idempotencyLockErrors.record({ err: error }),
      }),
      quotaLimiter: degrading ?? limiter,
      frequency,
      validation: { defaultRegion: settings.defaultRegion, scheduleHorizonMs: settings.scheduleHorizonDays * 86_400_000 },
      onDecision: (channel, decision) =>
        metrics.decisions.inc({ outcome: decision.code, channel, rule: decision.rule === undefined ? 'none' : String(decision.rule) }),
      observer: {
        rejected: (interceptor, code) => metrics.admissionRejections.inc({ interceptor, code }),
        undoFailed: (interceptor, error) =>
          logger.error({ err: error, interceptor }, 'undo failed: a rejected request kept what it consumed'),
      },
    });

    const frequencyChecks = new LimiterFrequencyCheckService({
      tenant: async (tenantId) => (await tenantConfigs.get(tenantId))?.tenant,
      limiter,
      degrading,
      onDecision: (decision) =>
        metrics.decisions.inc({
          outcome: decision.code,
          channel: 'none',
          rule: decision.rule === undefined ? 'none' : String(decision.rule),
        }),
    });
    const riskControl = createRiskControl({
      cacheOptions,
      repository: repositories.riskRules,
      tenant: async (tenantId) => (await tenantConfigs.get(tenantId))?.tenant,
      quota: degrading ?? limiter,
      limiter,
      degrading,
      redis,
      keySecret,
      clock,
      keyPrefix: settings.redisKeyPrefix,
      fallbackMode: settings.fallbackMode as FallbackMode,
      redisTimeoutMs: settings.redisTimeoutMs,
      memoryMax: settings.limiterMemoryMax,
      memoryMaxBytes: settings.riskMemoryMaxBytes,
      oneCall: settings.riskOneCall,
      metrics,
      logger,
    });
    closers.unshift(() => riskControl.close());
    const health = new ReadinessService({
      database,
      redis,
      ...(degrading ? { breakerState: () => degrading.state() } : {}),
      errors: new ThrottledLog<{ err: unknown; check: string }>((fields) => logger.warn(fields, 'readiness check failed'), clock),
    });

    // Other instances drop the tenant's cached bans; unannounced, they hold at most SLUICE_BAN_CACHE_MS.
    const announceBans =
      (subject: string) =>
      async <T>(result: T): Promise<T> => {
        await bus
          .publish(`bans:${subjectTenant(subject)}`)
          .catch((error: unknown) =>
            logger.warn(
              { err: error },
              'a lifted ban could not be announced: other instances may answer it banned for up to SLUICE_BAN_CACHE_MS',
            ),
          );
        return result;
      };

    // A canceled message gives its frequency slot back (a scheduled one holds it at its due time).
    const releaseSlot = async (tenantId: string, id: string) => {
      try {
        const message = await repositories.messages.findById(tenantId, id);
        if (message) await releaseFrequencySlot(directory, frequency, message, settings.defaultRegion);
      } catch (error) {
        logger.error({ err: error, messageId: id }, 'cancel: giving the frequency slot back failed');
      }
    };
    const messageService = new AdmittingMessageService(chain, repositories.messages, clock, releaseSlot, settings.batchRenderLimitBytes);
    const administration = createAdministration({
      repositories,
      directory,
      // Lifting a ban has no fallback: with Redis away it is a 503, not a 500.
      limiter: {
        unban: (subject) => limiter.unban(subject).then(announceBans(subject), unavailableUnlessSluiceError),
        reset: (subject) => limiter.reset(subject).then(announceBans(subject), unavailableUnlessSluiceError),
      },
      defaultRegion: settings.defaultRegion,
      blacklistChanged: () => blacklist.changed(),
      riskRulesChanged: (tenantId, action) => riskControl.invalidate(tenantId, action),
      riskStateMaxBytes: settings.riskStateMaxBytes,
    });
    const lookups = new AdminLookups({
      ...repositories,
      // A peek has no fallback either: with Redis away it is a 503.
      limiter,
      clock,
      defaultRegion: settings.defaultRegion,
    });
    const templateAdmin = new TemplateAdministration({
      tenants: repositories.tenants,
      templates: repositories.templates,
      quietHours: repositories.quietHours,
      invalidateTemplate: (tenantId, channel, name) => templates.invalidate(tenantId, channel, name),
      invalidateQuietHours: (tenantId, channel) => quietHours.invalidate(tenantId, channel),
    });
    const { resolver, service: webhooks } = createWebhooks(settings, { repositories, clock, bus, logger });
    closers.unshift(() => resolver.close());
    const receipts = new ReceiptIntake({
      providers: repositories.providers,
      receipts: repositories.receipts,
      clock,
      onReceipt: (provider, outcome, delivered, count) =>
        metrics.receipts.inc(
          { provider, outcome, status: delivered === undefined ? 'none' : delivered ? 'delivered' : 'undelivered' },
          count,
        ),
    });
    const services: Services = {
      messages: messageService,
      frequencyChecks,
      riskEvents: riskControl.service,
      ...administration,
      lookups,
      health,
      templates: templateAdmin,
      webhooks,
      receipts,
    };
    const http = httpDeps({ settings, services, directory, metrics, clock, logger, redisLimiter: redis ? limiter : undefined });

    return {
      settings,
      clock,
      logger,
      metrics,
      database,
      redis,
      repositories,
      directory,
      limiter,
      frequency,
      degrading,
      resolver,
      dueIndex: redis ? new RedisDueIndex({ client: redis as Redis, keyPrefix: settings.redisKeyPrefix }) : undefined,
      services,
      http,
      onAccepted: (listener) => acceptedListeners.push(listener),
      onConfigChange: (listener) => bus.subscribe(listener),
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
  } catch (error) {
    for (const close of closers) await Promise.resolve(close()).catch(() => undefined);
    throw error;
  }
}

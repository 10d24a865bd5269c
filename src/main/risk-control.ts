/**
 * Wires risk control: the rule sets' live cache (local → Redis → SQL, dropped everywhere on a
 * change like channel rules), the engine over the limiter and the event stores (Redis behind the
 * limiter's breaker, or in process), and the service with its metric.
 */
import type { Cluster, Redis } from 'ioredis';
import type { TenantView } from '../admission/context.js';
import type { QuotaCounter } from '../admission/interceptors/quota.js';
import { LiveCache, type LiveCacheOptions } from '../infra/live-cache.js';
import {
  type Clock,
  DegradingEventStore,
  type DegradingLimiter,
  directEvents,
  type FallbackMode,
  type Limiter,
  MemoryEventStore,
  RedisEventStore,
  RiskEngine,
  type RiskRule,
} from '../limiter/index.js';
import type { Metrics } from '../metrics/index.js';
import { EngineRiskEventService } from '../services/risk-event-service.js';
import { riskRulesOf } from '../services/risk-rules.js';
import type { RiskRuleView } from '../services/views.js';
import type { RiskRulesRepository } from '../storage/repositories/risk-rules.js';

export interface RiskControlWiring {
  cacheOptions: Omit<LiveCacheOptions<RiskRule[]>, 'name' | 'load'>;
  repository: RiskRulesRepository;
  tenant(tenantId: string): Promise<TenantView | undefined>;
  quota: QuotaCounter;
  limiter: Limiter;
  degrading: DegradingLimiter | undefined;
  redis: Redis | Cluster | undefined;
  keySecret: Buffer;
  clock: Clock;
  keyPrefix: string;
  fallbackMode: FallbackMode;
  redisTimeoutMs: number;
  memoryMax: number;
  /** `SLUICE_RISK_MEMORY_MAX_BYTES`: the in-process event store's bytes of state. */
  memoryMaxBytes: number;
  /** `SLUICE_RISK_ONE_CALL` (default false): decide a check in one event-store call where the store can. */
  oneCall: boolean;
  metrics: Metrics;
  /** Told when a denied check's window admissions could not be taken back. */
  logger: { warn(object: object, message: string): void };
}

/** The cache key of an action's set: tenant ids hold no `:`, so the first one splits. */
const cacheKey = (tenantId: string, action: string) => `${tenantId}:${action}`;

export function createRiskControl(wiring: RiskControlWiring): {
  service: EngineRiskEventService;
  invalidate(tenantId: string, action: string): Promise<void>;
  close(): Promise<void>;
} {
  const cache = new LiveCache<RiskRule[]>({
    ...wiring.cacheOptions,
    name: 'risk',
    load: async (key) => {
      const split = key.indexOf(':');
      const stored = await wiring.repository.get(key.slice(0, split), key.slice(split + 1));
      return stored ? riskRulesOf(stored.rules as RiskRuleView[]) : undefined;
    },
  });
  const local = new MemoryEventStore({
    clock: wiring.clock,
    keySecret: wiring.keySecret,
    maxSubjects: wiring.memoryMax,
    maxBytes: wiring.memoryMaxBytes,
  });
  const { redis, degrading } = wiring;
  const events =
    redis && degrading
      ? new DegradingEventStore({
          primary: new RedisEventStore({ client: redis, keySecret: wiring.keySecret, prefix: `${wiring.keyPrefix}risk` }),
          local,
          breaker: degrading.breaker,
          mode: wiring.fallbackMode,
          timeoutMs: wiring.redisTimeoutMs,
        })
      : directEvents(local);
  const engine = new RiskEngine({
    windows: degrading ?? wiring.limiter,
    peek: wiring.limiter,
    events,
    oneCall: wiring.oneCall,
    onUndoError: (error) => wiring.logger.warn({ err: error }, 'risk check: the window admissions of a denied check stay counted'),
  });
  const service = new EngineRiskEventService({
    tenant: wiring.tenant,
    quota: wiring.quota,
    ruleSet: (tenantId, action) => cache.get(cacheKey(tenantId, action)),
    engine,
    onVerdict: (action, rule, verdict) =>
      wiring.metrics.riskDecisions.inc({ action, rule: rule.name, outcome: verdict, shadow: String(rule.mode === 'shadow') }),
  });
  return { service, invalidate: (tenantId, action) => cache.invalidate(cacheKey(tenantId, action)), close: () => cache.close() };
}

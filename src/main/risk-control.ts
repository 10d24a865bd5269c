/**
 * Wires risk control: the rule sets' live cache (local → shared tier → SQL, dropped everywhere on
 * a change like channel rules), the engine over the backend's limiter and event store, and the
 * service with its metric.
 */
import type { TenantView } from '../admission/context.js';
import { LiveCache, type LiveCacheOptions } from '../infra/live-cache.js';
import { RiskEngine, type RiskRule } from '../limiter/index.js';
import type { Metrics } from '../metrics/index.js';
import { EngineRiskEventService } from '../services/risk-event-service.js';
import { riskRulesOf } from '../services/risk-rules.js';
import type { RiskRuleView } from '../services/views.js';
import type { RiskRulesRepository } from '../storage/repositories/risk-rules.js';
import type { Backend } from './backend/backend.js';

export interface RiskControlWiring {
  cacheOptions: Omit<LiveCacheOptions<RiskRule[]>, 'name' | 'load'>;
  repository: RiskRulesRepository;
  tenant(tenantId: string): Promise<TenantView | undefined>;
  backend: Pick<Backend, 'limiter' | 'resilientLimiter' | 'riskEvents'>;
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
  const { backend } = wiring;
  const engine = new RiskEngine({
    windows: backend.resilientLimiter,
    peek: backend.limiter,
    events: backend.riskEvents,
    onUndoError: (error) => wiring.logger.warn({ err: error }, 'risk check: the window admissions of a denied check stay counted'),
  });
  const service = new EngineRiskEventService({
    tenant: wiring.tenant,
    quota: backend.resilientLimiter,
    ruleSet: (tenantId, action) => cache.get(cacheKey(tenantId, action)),
    engine,
    onVerdict: (action, rule, verdict) =>
      wiring.metrics.riskDecisions.inc({ action, rule: rule.name, outcome: verdict, shadow: String(rule.mode === 'shadow') }),
  });
  return { service, invalidate: (tenantId, action) => cache.invalidate(cacheKey(tenantId, action)), close: () => cache.close() };
}

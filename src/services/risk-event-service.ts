/**
 * `POST /v1/risk/check` and `POST /v1/risk/events`: events judged by the rule set stored for
 * their (tenant, action), through the library's {@link RiskEngine}. A check draws on the tenant's
 * requests per second like a frequency check. Degradation: the engine's stores fall back by the
 * service's fallback mode while Redis is down, and the answer says `degraded: true`.
 */
import type { TenantView } from '../admission/context.js';
import { type QuotaCounter, quotaExceeded, tenantQpsRules } from '../admission/interceptors/quota.js';
import { tenantQpsSubject } from '../admission/subjects.js';
import { SluiceError, unavailableUnlessSluiceError } from '../core/errors.js';
import type { RiskEngine, RiskRule, RiskVerdict } from '../limiter/index.js';
import type { RiskEventService } from './contracts.js';
import { asInvalidRequest } from './risk-rules.js';
import type { RiskDecisionView } from './views.js';

export interface RiskEventDeps {
  /** The tenant's current config (status, QPS limit), from the live cache. */
  tenant(tenantId: string): Promise<TenantView | undefined>;
  /** The tenant's QPS bucket (the limiter, behind the breaker with Redis). */
  quota: QuotaCounter;
  /** The action's rule set (live cache), undefined when none is stored. */
  ruleSet(tenantId: string, action: string): Promise<readonly RiskRule[] | undefined>;
  engine: RiskEngine;
  /** Told each rule's verdict of every recorded check (metrics). */
  onVerdict?(action: string, rule: RiskRule, verdict: RiskVerdict): void;
}

/**
 * The scope of an action's rule states: `risk:<tenant>:r:<action length>:<action>:`. The `r`
 * keeps them apart from `/v1/frequency/check`'s subjects (`risk:<tenant>:<digits>:...`), and the
 * tenant id second lets the in-process limiter charge them to their tenant.
 */
export const riskScope = (tenantId: string, action: string): string => `risk:${tenantId}:r:${action.length}:${action}:`;

export class EngineRiskEventService implements RiskEventService {
  constructor(private readonly deps: RiskEventDeps) {}

  async check(
    tenantId: string,
    input: { action: string; dimensions: Record<string, string>; requestId?: string; record: boolean },
  ): Promise<RiskDecisionView> {
    const rules = await this.admit(tenantId, input.action);
    const decision = await this.deps.engine
      .check(riskScope(tenantId, input.action), rules, input.dimensions, {
        record: input.record,
        ...(input.requestId ? { requestId: input.requestId } : {}),
      })
      .catch((error) => unavailableUnlessSluiceError(asInvalidRequest(error)));
    const onVerdict = this.deps.onVerdict;
    if (input.record && onVerdict) {
      rules.forEach((rule, i) => {
        onVerdict(input.action, rule, decision.verdicts[i]!);
      });
    }
    return {
      allowed: decision.allowed,
      decision: decision.decision,
      reasons: decision.reasons.map(({ rule, kind, code, effect, count, limit, retryAfterMs, shadow }) => ({
        rule,
        kind,
        code,
        effect,
        ...(count === undefined ? {} : { count }),
        ...(limit === undefined ? {} : { limit }),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        shadow,
      })),
      ...(decision.degraded ? { degraded: true } : {}),
    };
  }

  async recordEvent(
    tenantId: string,
    input: { action: string; dimensions: Record<string, string>; outcome: string; requestId?: string },
  ): Promise<{ degraded?: boolean; duplicate?: boolean; skipped?: string[] }> {
    const rules = await this.admit(tenantId, input.action);
    const result = await this.deps.engine
      .record(riskScope(tenantId, input.action), rules, input.dimensions, input.outcome, undefined, input.requestId)
      .catch((error) => unavailableUnlessSluiceError(asInvalidRequest(error)));
    return {
      ...(result.degraded ? { degraded: true } : {}),
      ...(result.duplicate ? { duplicate: true } : {}),
      ...(result.skipped ? { skipped: result.skipped } : {}),
    };
  }

  /** Tenant status, its QPS, then the action's rules (NOT_FOUND without a set). */
  private async admit(tenantId: string, action: string): Promise<readonly RiskRule[]> {
    const tenant = await this.deps.tenant(tenantId).catch(unavailableUnlessSluiceError);
    if (tenant?.status !== 'active') throw new SluiceError('TENANT_SUSPENDED', 'this tenant is suspended');
    if (tenant.qpsLimit) {
      const taken = await this.deps.quota.check({ subject: tenantQpsSubject(tenantId), rules: tenantQpsRules(tenant.qpsLimit) });
      if (!taken.allowed) throw quotaExceeded('requests per second', taken.retryAfterMs);
    }
    const rules = await this.deps.ruleSet(tenantId, action).catch(unavailableUnlessSluiceError);
    if (!rules) throw new SluiceError('NOT_FOUND', `no risk rule set for action "${action}"`, { details: { field: 'action' } });
    return rules;
  }
}

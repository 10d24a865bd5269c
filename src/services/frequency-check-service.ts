/**
 * `POST /v1/frequency/check`: the limiter of the sends on any subject and action of a tenant's,
 * with the rules the caller passes. A check is a request like a send: it draws on the tenant's
 * requests per second, so one tenant cannot flood the limiter (and Redis) with checks.
 */
import type { TenantView } from '../admission/context.js';
import { type QuotaCounter, quotaExceeded, tenantQpsRules } from '../admission/interceptors/quota.js';
import { riskSubject, tenantQpsSubject } from '../admission/subjects.js';
import { SluiceError, unavailableUnlessSluiceError } from '../core/errors.js';
import type { DegradedDecision, DegradingLimiter } from '../limiter/degrade/index.js';
import type { Decision, Limiter } from '../limiter/index.js';
import type { FrequencyCheckService } from './contracts.js';

export interface FrequencyCheckDeps {
  /** The tenant's current config (status, QPS limit), from the live cache. */
  tenant(tenantId: string): Promise<TenantView | undefined>;
  /** The limiter of record (Redis, or in process). */
  limiter: Limiter;
  /** Redis behind the degradation breaker, when Redis is configured: checks follow its fallback. */
  degrading: DegradingLimiter | undefined;
  /** Told every recorded decision (metrics). */
  onDecision?(decision: Decision): void;
}

export class LimiterFrequencyCheckService implements FrequencyCheckService {
  private readonly quota: QuotaCounter;

  constructor(private readonly deps: FrequencyCheckDeps) {
    this.quota = deps.degrading ?? deps.limiter;
  }

  async check(tenantId: string, input: Parameters<FrequencyCheckService['check']>[1]): Promise<Decision> {
    const { limiter, degrading } = this.deps;
    const tenant = await this.deps.tenant(tenantId).catch(unavailableUnlessSluiceError);
    if (tenant?.status !== 'active') throw new SluiceError('TENANT_SUSPENDED', 'this tenant is suspended');
    if (tenant.qpsLimit) {
      const taken = await this.quota.check({ subject: tenantQpsSubject(tenantId), rules: tenantQpsRules(tenant.qpsLimit) });
      if (!taken.allowed) throw quotaExceeded('requests per second', taken.retryAfterMs);
    }
    const subject = riskSubject(tenantId, input.action, input.subject);
    const request = { subject, rules: input.rules, ...(input.requestId ? { requestId: input.requestId } : {}) };
    // A look records nothing and has no fallback worth giving: without Redis it is a 503.
    const decision = !input.record
      ? await limiter.peek({ subject, rules: input.rules }).catch(unavailableUnlessSluiceError)
      : degrading
        ? await degrading.check(request)
        : await limiter.check(request).catch(unavailableUnlessSluiceError);
    if (input.record) this.deps.onDecision?.(decision);
    const { allowed, code, rule, retryAfterMs, counts } = decision;
    const { degraded } = decision as DegradedDecision;
    return {
      allowed,
      code,
      ...(rule === undefined ? {} : { rule }),
      retryAfterMs,
      counts,
      at: decision.at,
      ...(degraded ? { degraded } : {}),
    };
  }
}

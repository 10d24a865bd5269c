/**
 * The frequency decision the chain and the risk API use: a plain limiter in the embedded default,
 * or Redis behind the degradation breaker (DESIGN.md §7) when Redis is configured.
 */

import { type DegradedDecision, type DegradingLimiter, divideRules, type FallbackPolicy } from '../../limiter/degrade/index.js';
import type { CheckRequest, Decision, Limiter, Rule } from '../../limiter/index.js';
import type { FrequencyGate, FrequencyRequest, TenantFallback } from '../ports.js';

/** The limiter's check of a frequency request: the request without the tenant's fallback. */
function checkOf({ fallback: _fallback, ...check }: FrequencyRequest): CheckRequest {
  return check;
}

export class LocalFrequencyGate implements FrequencyGate {
  constructor(
    readonly limiter: Limiter,
    /** Told each decision's duration (the degrading gate reports its own through its listener). */
    private readonly observe?: (ms: number, outcome: string) => void,
  ) {}

  async check(request: FrequencyRequest): Promise<Decision> {
    const startedAt = performance.now();
    const decision = await this.limiter.check(checkOf(request));
    this.observe?.(performance.now() - startedAt, decision.code);
    return decision;
  }

  undo(request: FrequencyRequest, decision: Decision): Promise<void> {
    return this.limiter.undo({ subject: request.subject, rules: request.rules, requestId: request.requestId, at: decision.at });
  }

  decidingRules(request: FrequencyRequest): readonly Rule[] {
    return request.rules;
  }
}

export class DegradingFrequencyGate implements FrequencyGate {
  /** Tenant fallbacks come from the config cache, long-lived objects: complete each once. */
  private readonly policies = new WeakMap<TenantFallback, FallbackPolicy>();

  constructor(
    readonly limiter: DegradingLimiter,
    /** The instance-wide part of every tenant's policy (settings). */
    private readonly defaults: Omit<FallbackPolicy, 'mode' | 'staticRules'>,
  ) {}

  private policyOf(fallback: TenantFallback | undefined): FallbackPolicy {
    if (!fallback) return this.limiter.policy;
    let policy = this.policies.get(fallback);
    if (!policy) {
      policy = { ...this.defaults, mode: fallback.mode, ...(fallback.staticRules ? { staticRules: fallback.staticRules } : {}) };
      this.policies.set(fallback, policy);
    }
    return policy;
  }

  check(request: FrequencyRequest): Promise<Decision> {
    return this.limiter.check(checkOf(request), this.policyOf(request.fallback));
  }

  async undo(request: FrequencyRequest, decision: Decision): Promise<void> {
    const { degraded } = decision as DegradedDecision;
    await this.limiter.undo(
      { subject: request.subject, rules: request.rules, requestId: request.requestId, at: decision.at, ...(degraded ? { degraded } : {}) },
      this.policyOf(request.fallback),
    );
  }

  decidingRules(request: FrequencyRequest, decision: Decision): readonly Rule[] | undefined {
    const policy = this.policyOf(request.fallback);
    switch ((decision as DegradedDecision).degraded) {
      case undefined:
        return request.rules;
      case 'local':
        return divideRules(request.rules, policy.divideBy);
      case 'static':
        return policy.staticRules;
      default:
        return undefined;
    }
  }
}

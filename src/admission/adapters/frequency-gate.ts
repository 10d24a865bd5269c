/**
 * The frequency decision the chain and the risk API use: a plain limiter in the embedded default,
 * or Redis behind the degradation breaker (DESIGN.md §7) when Redis is configured.
 */

import {
  type DegradedDecision,
  type FallbackPolicy as DegradePolicy,
  type DegradingLimiter,
  divideRules,
} from '../../limiter/degrade/index.js';
import type { Decision, Limiter, Rule } from '../../limiter/index.js';
import type { FallbackPolicy, FrequencyGate } from '../ports.js';

export class LocalFrequencyGate implements FrequencyGate {
  constructor(
    readonly limiter: Limiter,
    /** Told each decision's duration (the degrading gate reports its own through its listener). */
    private readonly observe?: (ms: number, outcome: string) => void,
  ) {}

  async check(
    subject: string,
    rules: readonly Rule[],
    requestId: string,
    _fallback?: FallbackPolicy | undefined,
    countAt?: number | undefined,
  ): Promise<Decision> {
    const startedAt = performance.now();
    const decision = await this.limiter.check({ subject, rules, requestId, ...(countAt === undefined ? {} : { countAt }) });
    this.observe?.(performance.now() - startedAt, decision.code);
    return decision;
  }

  undo(subject: string, rules: readonly Rule[], requestId: string, decision: Decision): Promise<void> {
    return this.limiter.undo({ subject, rules, requestId, at: decision.at });
  }

  decidingRules(rules: readonly Rule[]): readonly Rule[] {
    return rules;
  }
}

export class DegradingFrequencyGate implements FrequencyGate {
  /** Tenant fallbacks come from the config cache, long-lived objects: convert each once. */
  private readonly policies = new WeakMap<FallbackPolicy, DegradePolicy>();

  constructor(
    readonly limiter: DegradingLimiter,
    private readonly defaults: Omit<DegradePolicy, 'mode' | 'staticRules'>,
  ) {}

  private policyOf(fallback: FallbackPolicy | undefined): DegradePolicy {
    if (!fallback) return this.limiter.policy;
    let policy = this.policies.get(fallback);
    if (!policy) {
      policy = { ...this.defaults, mode: fallback.mode, ...(fallback.staticRules ? { staticRules: fallback.staticRules } : {}) };
      this.policies.set(fallback, policy);
    }
    return policy;
  }

  check(
    subject: string,
    rules: readonly Rule[],
    requestId: string,
    fallback: FallbackPolicy | undefined,
    countAt?: number | undefined,
  ): Promise<Decision> {
    return this.limiter.check({ subject, rules, requestId, ...(countAt === undefined ? {} : { countAt }) }, this.policyOf(fallback));
  }

  async undo(
    subject: string,
    rules: readonly Rule[],
    requestId: string,
    decision: Decision,
    fallback: FallbackPolicy | undefined,
  ): Promise<void> {
    const { degraded } = decision as DegradedDecision;
    await this.limiter.undo({ subject, rules, requestId, at: decision.at, ...(degraded ? { degraded } : {}) }, this.policyOf(fallback));
  }

  decidingRules(rules: readonly Rule[], decision: Decision, fallback: FallbackPolicy | undefined): readonly Rule[] | undefined {
    const policy = this.policyOf(fallback);
    switch ((decision as DegradedDecision).degraded) {
      case undefined:
        return rules;
      case 'local':
        return divideRules(rules, policy.divideBy);
      case 'static':
        return policy.staticRules;
      default:
        return undefined;
    }
  }
}

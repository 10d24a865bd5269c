/**
 * A tenant's frequency rules per channel and its risk rule sets per action, for the admin API and
 * the CLI (contract: `RuleAdminService`). A change is live everywhere within a second.
 */
import type { Channel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import { FALLBACK_MODES, normalizeRule } from '../limiter/index.js';
import type { RiskRuleSet, RiskRulesRepository } from '../storage/repositories/risk-rules.js';
import { type RuleSet, type RulesRepository, toLimiterRule } from '../storage/repositories/rules.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { StoredRule } from '../storage/schema.js';
import type { FallbackView, RuleAdminService, RuleSetView, RuleView } from './contracts.js';
import { checkRiskState, riskRulesOf } from './risk-rules.js';
import type { ConfigInvalidation } from './tenant-administration.js';
import { requireTenant } from './tenant-administration.js';
import type { RiskRuleSetView, RiskRuleView } from './views.js';

export interface RuleAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  rules: RulesRepository;
  riskRules: RiskRulesRepository;
  /** The tenant config cache (it holds the channels' rules): a change drops every instance's copy. */
  directory: Pick<ConfigInvalidation, 'invalidateTenant'>;
  /** After an action's risk rule set changed in SQL: every instance drops its copy. */
  riskRulesChanged: (tenantId: string, action: string) => Promise<void>;
  /** `SLUICE_RISK_STATE_MAX_BYTES`: a risk rule set's most bytes of state for one event's values. */
  riskStateMaxBytes: number;
}

const riskRuleSetView = (stored: RiskRuleSet): RiskRuleSetView => ({
  action: stored.action,
  rules: stored.rules as RiskRuleView[],
  version: stored.version,
});

export class RuleAdministration implements RuleAdminService {
  constructor(private readonly deps: RuleAdministrationDeps) {}

  async setRules(tenantId: string, channel: Channel, rules: RuleView[], fallback?: FallbackView | null): Promise<RuleSetView> {
    checkRules(rules, 'rules');
    if (fallback && !(FALLBACK_MODES as readonly string[]).includes(fallback.mode)) {
      throw new SluiceError('INVALID_REQUEST', `fallback.mode must be one of ${FALLBACK_MODES.join(', ')}`, {
        details: { field: 'fallback.mode' },
      });
    }
    if (fallback?.mode === 'static' && !fallback.rules?.length) {
      throw new SluiceError('INVALID_REQUEST', 'a static fallback needs its rules', { details: { field: 'fallback.rules' } });
    }
    if (fallback && fallback.mode !== 'static' && fallback.rules !== undefined) {
      throw new SluiceError(
        'INVALID_REQUEST',
        `only a static fallback has rules of its own: "${fallback.mode}" ${fallback.mode === 'local' ? "counts the channel's rules in process" : 'counts nothing'}`,
        { details: { field: 'fallback.rules' } },
      );
    }
    if (fallback?.rules) checkRules(fallback.rules, 'fallback.rules');
    await requireTenant(this.deps.tenants, tenantId);
    const stored = await this.deps.rules.set(tenantId, channel, {
      rules: rules.map(storedRule),
      fallback: fallback ? { mode: fallback.mode, ...(fallback.rules ? { rules: fallback.rules.map(storedRule) } : {}) } : null,
    });
    await this.deps.directory.invalidateTenant(tenantId);
    return ruleSetView(channel, stored);
  }

  async getRules(tenantId: string, channel: Channel): Promise<RuleSetView> {
    await requireTenant(this.deps.tenants, tenantId);
    return ruleSetView(channel, await this.deps.rules.get(tenantId, channel));
  }

  async setRiskRules(tenantId: string, action: string, rules: RiskRuleView[]): Promise<RiskRuleSetView> {
    checkRiskState(riskRulesOf(rules), this.deps.riskStateMaxBytes);
    await requireTenant(this.deps.tenants, tenantId);
    const stored = await this.deps.riskRules.set(tenantId, action, rules);
    await this.deps.riskRulesChanged(tenantId, action);
    return riskRuleSetView(stored);
  }

  async getRiskRules(tenantId: string, action: string): Promise<RiskRuleSetView> {
    await requireTenant(this.deps.tenants, tenantId);
    const stored = await this.deps.riskRules.get(tenantId, action);
    if (!stored) throw new SluiceError('NOT_FOUND', `no risk rule set for action "${action}"`, { details: { field: 'action' } });
    return riskRuleSetView(stored);
  }
}

/** INVALID_REQUEST naming the first rule the limiter would refuse. */
export function checkRules(rules: RuleView[], field: string): void {
  rules.forEach((rule, index) => {
    try {
      normalizeRule(toLimiterRule(rule), index);
    } catch (error) {
      // The limiter's message names `rules[i]`: under the fallback, that is `fallback.rules[i]`.
      const message = (error as Error).message;
      throw new SluiceError('INVALID_REQUEST', field === 'rules' ? message : `fallback.${message}`, {
        details: { field: `${field}[${index}]` },
      });
    }
  });
}

const storedRule = (rule: RuleView): StoredRule => ({
  windowSeconds: rule.windowSeconds,
  limit: rule.limit,
  banSeconds: rule.banSeconds,
  ...(rule.algorithm ? { algorithm: rule.algorithm } : {}),
});

const ruleView = (rule: StoredRule): RuleView => ({ ...storedRule(rule), banSeconds: rule.banSeconds ?? 0 });

/**
 * What GET answers: the shape PUT takes, so it can be PUT back. A fallback other than `static`
 * shows no rules (older versions stored and echoed them, though only `static` uses them).
 */
function ruleSetView(channel: Channel, stored: RuleSet | undefined): RuleSetView {
  const fallback = stored?.fallback;
  return {
    channel,
    rules: (stored?.rules ?? []).map(ruleView),
    fallback: fallback
      ? { mode: fallback.mode, ...(fallback.mode === 'static' && fallback.rules ? { rules: fallback.rules.map(ruleView) } : {}) }
      : null,
    version: stored?.version ?? 0,
  };
}

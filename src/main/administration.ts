/**
 * Wires the admin API's services, one per aggregate (tenants and their keys, rules, blacklists,
 * providers, bans), over the repositories and the live caches each change drops on every instance.
 */
import type { Limiter } from '../limiter/index.js';
import { BanAdministration } from '../services/ban-administration.js';
import { BlacklistAdministration } from '../services/blacklist-administration.js';
import type { Services } from '../services/contracts.js';
import { ProviderAdministration } from '../services/provider-administration.js';
import { RuleAdministration } from '../services/rule-administration.js';
import { type ConfigInvalidation, TenantAdministration } from '../services/tenant-administration.js';
import type { BlacklistRepository } from '../storage/repositories/blacklist.js';
import type { ProvidersRepository } from '../storage/repositories/providers.js';
import type { RiskRulesRepository } from '../storage/repositories/risk-rules.js';
import type { RulesRepository } from '../storage/repositories/rules.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';

export interface AdministrationInput {
  repositories: {
    tenants: TenantsRepository;
    rules: RulesRepository;
    riskRules: RiskRulesRepository;
    blacklist: BlacklistRepository;
    providers: ProvidersRepository;
  };
  /** The tenant config cache (the tenant directory). */
  directory: ConfigInvalidation;
  /** The limiter holding recipients' bans, its failures already mapped and its changes announced. */
  limiter: Pick<Limiter, 'unban' | 'reset'>;
  defaultRegion: string;
  /** After a blacklist change in SQL: refresh the in-process copies. */
  blacklistChanged: () => Promise<void>;
  /** After an action's risk rule set changed in SQL: every instance drops its copy. */
  riskRulesChanged: (tenantId: string, action: string) => Promise<void>;
  /** `SLUICE_RISK_STATE_MAX_BYTES`. */
  riskStateMaxBytes: number;
}

export type Administration = Pick<Services, 'tenants' | 'rules' | 'blacklists' | 'providers' | 'bans'>;

export function createAdministration(input: AdministrationInput): Administration {
  const { repositories, directory, defaultRegion } = input;
  const tenants = new TenantAdministration({ tenants: repositories.tenants, directory });
  const rules = new RuleAdministration({
    tenants: repositories.tenants,
    rules: repositories.rules,
    riskRules: repositories.riskRules,
    directory,
    riskRulesChanged: input.riskRulesChanged,
    riskStateMaxBytes: input.riskStateMaxBytes,
  });
  const blacklists = new BlacklistAdministration({
    tenants: repositories.tenants,
    blacklist: repositories.blacklist,
    defaultRegion,
    blacklistChanged: input.blacklistChanged,
  });
  const providers = new ProviderAdministration({ tenants: repositories.tenants, providers: repositories.providers });
  const bans = new BanAdministration({ tenants: repositories.tenants, limiter: input.limiter, defaultRegion });
  return { tenants, rules, blacklists, providers, bans };
}

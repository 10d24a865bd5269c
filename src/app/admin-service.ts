/** Operator actions for the admin API and the CLI; every change invalidates the live config everywhere. */
import { frequencySubject } from '../admission/interceptors/frequency.js';
import type { FallbackPolicy } from '../admission/ports.js';
import { normalizeRecipient } from '../admission/recipients.js';
import { CHANNELS, type Channel } from '../channels.js';
import { SluiceError } from '../errors.js';
import { type Limiter, normalizeRule } from '../limiter/index.js';
import type { BlacklistRepository } from '../storage/repositories/blacklist.js';
import type { RulesRepository } from '../storage/repositories/rules.js';
import type { Tenant, TenantsRepository } from '../storage/repositories/tenants.js';
import type { AdminService, RuleSetView, TenantDetails } from './contracts.js';
import { type CachedTenantDirectory, toLimiterRule } from './directory.js';

export interface AdminServiceDeps {
  tenants: TenantsRepository;
  rules: RulesRepository;
  blacklist: BlacklistRepository;
  directory: CachedTenantDirectory;
  /** The limiter holding recipients' bans. */
  limiter: Pick<Limiter, 'unban'>;
  defaultRegion: string;
}

/** A recipient of a blacklist entry for any channel: the channel is told by its shape. */
function normalizeAnyChannel(input: string, region: string): string | undefined {
  const guesses: Channel[] = input.includes('@') ? ['email'] : /^[+\d][\d\s()-]*$/.test(input) ? ['sms'] : ['webhook'];
  for (const channel of guesses) {
    const result = normalizeRecipient(channel, input, region);
    if (result.ok) return result.recipient;
  }
  return undefined;
}

export class SqlAdminService implements AdminService {
  constructor(private readonly deps: AdminServiceDeps) {}

  private async details(tenant: Tenant): Promise<TenantDetails> {
    const quotas = await this.deps.tenants.getDailyQuotas(tenant.id);
    return {
      id: tenant.id,
      name: tenant.name,
      status: tenant.status,
      qpsLimit: tenant.qpsLimit,
      dailyQuotas: Object.fromEntries(CHANNELS.map((channel) => [channel, quotas[channel] ?? null])),
      createdAt: new Date(tenant.createdAt).toISOString(),
    };
  }

  async createTenant(name: string, qpsLimit?: number | null) {
    const created = await this.deps.tenants.create({ name, qpsLimit: qpsLimit ?? null });
    return { id: created.tenant.id, name: created.tenant.name, apiKey: created.apiKey };
  }

  async listTenants() {
    return Promise.all((await this.deps.tenants.list({ limit: 1000 })).map((tenant) => this.details(tenant)));
  }

  async getTenant(id: string) {
    const tenant = await this.deps.tenants.get(id);
    return tenant ? this.details(tenant) : undefined;
  }

  async updateTenant(id: string, patch: Parameters<AdminService['updateTenant']>[1]) {
    const tenant = await this.deps.tenants.update(id, patch);
    if (!tenant) return undefined;
    await this.deps.directory.invalidateTenant(id);
    return this.details(tenant);
  }

  async setRules(tenantId: string, channel: Channel, rules: RuleSetView['rules'], fallback?: FallbackPolicy): Promise<RuleSetView> {
    rules.forEach((rule, index) => {
      try {
        normalizeRule(toLimiterRule(rule), index);
      } catch (error) {
        throw new SluiceError('INVALID_REQUEST', (error as Error).message, { details: { field: `rules[${index}]` } });
      }
    });
    if (fallback?.mode === 'static' && !fallback.staticRules?.length) {
      throw new SluiceError('INVALID_REQUEST', 'a static fallback needs its rules', { details: { field: 'fallback.rules' } });
    }
    const stored = await this.deps.rules.set(tenantId, channel, {
      rules: rules.map((rule) => ({
        windowSeconds: rule.windowSeconds,
        limit: rule.limit,
        banSeconds: rule.banSeconds,
        ...(rule.algorithm ? { algorithm: rule.algorithm } : {}),
      })),
      fallback: fallback
        ? { mode: fallback.mode, ...(fallback.staticRules ? { rules: fallback.staticRules.map(fromLimiterRule) } : {}) }
        : null,
    });
    await this.deps.directory.invalidateTenant(tenantId);
    return {
      channel,
      rules: stored.rules.map((rule) => ({ ...rule, banSeconds: rule.banSeconds ?? 0 })),
      fallback: fallback ?? null,
      version: stored.version,
    };
  }

  async getRules(tenantId: string, channel: Channel): Promise<RuleSetView> {
    const stored = await this.deps.rules.get(tenantId, channel);
    return {
      channel,
      rules: stored?.rules ?? [],
      fallback: stored?.fallback
        ? { mode: stored.fallback.mode, ...(stored.fallback.rules ? { staticRules: stored.fallback.rules.map(toLimiterRule) } : {}) }
        : null,
      version: stored?.version ?? 0,
    };
  }

  private normalizeAll(channel: Channel | '*', recipients: string[]): { valid: string[]; invalid: string[] } {
    const valid: string[] = [];
    const invalid: string[] = [];
    for (const input of recipients) {
      const recipient =
        channel === '*'
          ? normalizeAnyChannel(input, this.deps.defaultRegion)
          : ((result) => (result.ok ? result.recipient : undefined))(normalizeRecipient(channel, input, this.deps.defaultRegion));
      if (recipient) valid.push(recipient);
      else invalid.push(input);
    }
    return { valid, invalid };
  }

  async addToBlacklist(tenantId: string, channel: Channel | '*', recipients: string[], reason?: string) {
    const { valid, invalid } = this.normalizeAll(channel, recipients);
    for (const recipient of valid) await this.deps.blacklist.add({ scope: tenantId, channel, recipient, reason: reason ?? null });
    return { added: valid, invalid };
  }

  async removeFromBlacklist(tenantId: string, channel: Channel | '*', recipients: string[]) {
    const { valid, invalid } = this.normalizeAll(channel, recipients);
    let removed = 0;
    for (const recipient of valid) if (await this.deps.blacklist.remove({ scope: tenantId, channel, recipient })) removed++;
    return { removed, invalid };
  }

  async liftBan(tenantId: string, channel: Channel, to: string): Promise<boolean> {
    const normalized = normalizeRecipient(channel, to, this.deps.defaultRegion);
    if (!normalized.ok) throw new SluiceError('INVALID_REQUEST', normalized.reason, { details: { field: 'to' } });
    return this.deps.limiter.unban(frequencySubject(tenantId, channel, normalized.recipient));
  }
}

function fromLimiterRule(rule: { windowMs: number; limit: number; banMs?: number; algorithm?: string }) {
  return {
    windowSeconds: rule.windowMs / 1000,
    limit: rule.limit,
    banSeconds: (rule.banMs ?? 0) / 1000,
    ...(rule.algorithm ? { algorithm: rule.algorithm } : {}),
  };
}

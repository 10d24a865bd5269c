/**
 * Tenants and their API keys, for the admin API and the CLI (contract: `TenantAdminService`). A
 * change to a tenant or its keys drops every instance's cached copy before it answers.
 */
import { type Channel, perChannel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import type { Clock } from '../limiter/clock.js';
import type { BacklogRepository } from '../storage/repositories/backlog.js';
import type { Tenant, TenantsRepository } from '../storage/repositories/tenants.js';
import type {
  ApiKeyView,
  CreatedTenantView,
  RuleView,
  TenantAdminService,
  TenantBacklogView,
  TenantDetails,
  TenantPage,
} from './contracts.js';

/** What an admin change tells the tenant config cache (the tenant directory). */
export interface ConfigInvalidation {
  /** After a key is issued or revoked: every instance drops these keys' cached tenants. */
  invalidateApiKeys(keyHashes: string[]): Promise<void>;
  /** After a change to a tenant's status, quotas or rules. */
  invalidateTenant(tenantId: string): Promise<void>;
}

export interface TenantAdministrationDeps {
  tenants: TenantsRepository;
  /** What waits to be sent, read at the clock's now. */
  backlog: Pick<BacklogRepository, 'ofTenant'>;
  clock: Clock;
  /** The tenant config cache: a change drops every instance's copy. */
  directory: ConfigInvalidation;
  /**
   * The frequency rules a new tenant gets on {@link NEW_TENANT_RULE_CHANNELS} (SLUICE_NEW_TENANT_RULES;
   * empty: none, and the creation warns), and how they are set (the rule administration's check
   * and invalidation). Absent: none.
   */
  newTenantRules?: { rules: RuleView[]; set(tenantId: string, channel: Channel, rules: RuleView[]): Promise<unknown> };
}

/**
 * The channels a new tenant gets rules on: those whose recipients are people (SMS costs per
 * message and is pumped; email is a person's inbox). A webhook recipient is an operator's
 * endpoint, whose volume is the tenant's own business.
 */
export const NEW_TENANT_RULE_CHANNELS: readonly Channel[] = ['sms', 'email'];

export class TenantAdministration implements TenantAdminService {
  constructor(private readonly deps: TenantAdministrationDeps) {}

  private async details(tenant: Tenant): Promise<TenantDetails> {
    const quotas = await this.deps.tenants.getDailyQuotas(tenant.id);
    return {
      id: tenant.id,
      name: tenant.name,
      status: tenant.status,
      qpsLimit: tenant.qpsLimit,
      sendWeight: tenant.sendWeight,
      dailyQuotas: perChannel((channel) => quotas[channel] ?? null),
      createdAt: new Date(tenant.createdAt).toISOString(),
    };
  }

  async createTenant(name: string, qpsLimit?: number | null, sendWeight?: number): Promise<CreatedTenantView> {
    const created = await this.deps.tenants.create({
      name,
      qpsLimit: qpsLimit ?? null,
      ...(sendWeight === undefined ? {} : { sendWeight }),
    });
    const id = created.tenant.id;
    const rules = this.deps.newTenantRules?.rules ?? [];
    for (const channel of rules.length > 0 ? NEW_TENANT_RULE_CHANNELS : []) await this.deps.newTenantRules!.set(id, channel, rules);
    return {
      id,
      name: created.tenant.name,
      apiKey: created.apiKey,
      rules,
      warnings:
        rules.length > 0
          ? []
          : [
              `no frequency rules (SLUICE_NEW_TENANT_RULES=none): sends to one recipient are unlimited until rules are set (PUT /v1/admin/tenants/${id}/rules/sms, or sluice rules set ${id} sms 60:3:600 3600:10:600)`,
            ],
    };
  }

  async listApiKeys(tenantId: string): Promise<ApiKeyView[] | undefined> {
    if (!(await this.deps.tenants.get(tenantId))) return undefined;
    return (await this.deps.tenants.listKeys(tenantId)).map((key) => ({
      id: key.id,
      prefix: key.keyPrefix,
      createdAt: new Date(key.createdAt).toISOString(),
      revokedAt: key.revokedAt === null ? null : new Date(key.revokedAt).toISOString(),
    }));
  }

  async issueApiKey(tenantId: string, options: { keepOthers?: boolean } = {}): Promise<{ keyId: string; apiKey: string } | undefined> {
    const issued = await this.deps.tenants.rotateKey(tenantId, { revokeOthers: !(options.keepOthers ?? false) });
    if (!issued) return undefined;
    await this.deps.directory.invalidateApiKeys(issued.revokedHashes);
    return { keyId: issued.keyId, apiKey: issued.apiKey };
  }

  async revokeApiKey(tenantId: string, keyId: string): Promise<boolean> {
    const hash = await this.deps.tenants.activeKeyHash(tenantId, keyId);
    if (hash === undefined || !(await this.deps.tenants.revokeKey(tenantId, keyId))) return false;
    await this.deps.directory.invalidateApiKeys([hash]);
    return true;
  }

  async listTenants(options: { limit?: number; after?: string } = {}): Promise<TenantPage> {
    const limit = pageLimit(options.limit);
    // One more than the page: whether there is a next page, without a count.
    const rows = await this.deps.tenants.list({ limit: limit + 1, ...(options.after === undefined ? {} : { after: options.after }) });
    const page = rows.slice(0, limit);
    return {
      tenants: await Promise.all(page.map((tenant) => this.details(tenant))),
      next: rows.length > limit ? page.at(-1)!.id : null,
    };
  }

  async getTenant(id: string) {
    const tenant = await this.deps.tenants.get(id);
    return tenant ? this.details(tenant) : undefined;
  }

  async getBacklog(id: string): Promise<TenantBacklogView | undefined> {
    if (!(await this.deps.tenants.get(id))) return undefined;
    const now = this.deps.clock.now();
    const lanes = await this.deps.backlog.ofTenant(id, now);
    return {
      tenantId: id,
      at: new Date(now).toISOString(),
      lanes: lanes.map((lane) => ({
        ...lane,
        oldestDue: lane.oldestDue === null ? null : { id: lane.oldestDue.id, dueAt: new Date(lane.oldestDue.dueAt).toISOString() },
      })),
    };
  }

  async updateTenant(id: string, patch: Parameters<TenantAdminService['updateTenant']>[1]) {
    const tenant = await this.deps.tenants.update(id, patch);
    if (!tenant) return undefined;
    await this.deps.directory.invalidateTenant(id);
    return this.details(tenant);
  }
}

/**
 * NOT_FOUND for an unknown tenant: what belongs to a tenant (its rules, blacklist, bans) cannot be
 * touched without it (the API's 404, the CLI's exit 1).
 */
export async function requireTenant(tenants: Pick<TenantsRepository, 'get'>, id: string): Promise<void> {
  if (!(await tenants.get(id))) throw new SluiceError('NOT_FOUND', 'no such tenant');
}

/** An admin list's page size: 1 to 1000, 100 by default. */
export function pageLimit(limit = 100): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new SluiceError('INVALID_REQUEST', `limit: ${limit} is not an integer from 1 to 1000`, { details: { field: 'limit' } });
  }
  return limit;
}

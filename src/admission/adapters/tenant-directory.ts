/**
 * The tenant directory the admission chain reads: API key → tenant, and each tenant's quotas,
 * rules and fallback per channel, through the live cache (local → Redis → SQL).
 */

import { CHANNELS, type Channel } from '../../core/channels.js';
import type { LiveCache } from '../../infra/live-cache.js';
import type { Database } from '../../storage/database.js';
import { type RulesRepository, toLimiterRule } from '../../storage/repositories/rules.js';
import { hashApiKey, type TenantsRepository } from '../../storage/repositories/tenants.js';
import type { StoredFallback } from '../../storage/schema.js';
import type { TenantView } from '../context.js';
import type { ChannelPolicy, TenantDirectory, TenantFallback } from '../ports.js';

/** Everything admission needs about one tenant, cached as one JSON value. */
export interface TenantConfig {
  tenant: TenantView;
  channels: Partial<Record<Channel, ChannelPolicy>>;
}

const toFallback = (stored: StoredFallback | null): TenantFallback | undefined =>
  stored ? { mode: stored.mode, ...(stored.rules ? { staticRules: stored.rules.map(toLimiterRule) } : {}) } : undefined;

/** Loads one tenant's whole config from SQL: what the tenant cache stores. */
export async function loadTenantConfig(
  tenants: TenantsRepository,
  rules: RulesRepository,
  tenantId: string,
): Promise<TenantConfig | undefined> {
  const tenant = await tenants.get(tenantId);
  if (!tenant) return undefined;
  const [quotas, ruleSets] = await Promise.all([tenants.getDailyQuotas(tenantId), rules.listForTenant(tenantId)]);
  const channels: TenantConfig['channels'] = {};
  for (const channel of CHANNELS) {
    const set = ruleSets.find((ruleSet) => ruleSet.channel === channel);
    channels[channel] = {
      rules: set ? set.rules.map(toLimiterRule) : [],
      dailyLimit: quotas[channel] ?? null,
      fallback: toFallback(set?.fallback ?? null),
    };
  }
  return { tenant: { id: tenant.id, name: tenant.name, status: tenant.status, qpsLimit: tenant.qpsLimit }, channels };
}

/** API key hash → tenant id, from SQL (revoked keys are unknown). */
export async function loadTenantIdByKeyHash(database: Database, keyHash: string): Promise<string | undefined> {
  const row = await database.db
    .selectFrom('api_keys')
    .select('tenant_id')
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row?.tenant_id;
}

const NO_RULES: ChannelPolicy = { rules: [], dailyLimit: null };

/** Keys whose hash is kept: a key in use is hashed once, not on every request (twice per send). */
const MAX_KEY_HASHES = 1024;

export class CachedTenantDirectory implements TenantDirectory {
  /**
   * Clear key → its hash, for keys that found a tenant only, so wrong keys cannot churn it;
   * the oldest goes first. The hash of a key never changes: revoking a key invalidates the
   * hash's entry in the live cache (`invalidateApiKeys`), which every lookup still reads.
   */
  private readonly keyHashes = new Map<string, string>();

  constructor(
    private readonly apiKeys: LiveCache<string>,
    private readonly tenants: LiveCache<TenantConfig>,
  ) {}

  async tenantByApiKey(apiKey: string): Promise<TenantView | undefined> {
    if (apiKey.length > 200) return undefined;
    const known = this.keyHashes.get(apiKey);
    const keyHash = known ?? hashApiKey(apiKey);
    const tenantId = await this.apiKeys.get(keyHash);
    const tenant = tenantId ? (await this.tenants.get(tenantId))?.tenant : undefined;
    if (tenant && known === undefined) {
      if (this.keyHashes.size >= MAX_KEY_HASHES) this.keyHashes.delete(this.keyHashes.keys().next().value!);
      this.keyHashes.set(apiKey, keyHash);
    }
    return tenant;
  }

  async channelPolicy(tenantId: string, channel: Channel): Promise<ChannelPolicy> {
    return (await this.tenants.get(tenantId))?.channels[channel] ?? NO_RULES;
  }

  /** After keys are revoked: every instance forgets them at once, not when their cache entry expires. */
  async invalidateApiKeys(keyHashes: string[]): Promise<void> {
    const revoked = new Set(keyHashes);
    for (const [key, hash] of this.keyHashes) if (revoked.has(hash)) this.keyHashes.delete(key);
    await Promise.all(keyHashes.map((hash) => this.apiKeys.invalidate(hash)));
  }

  /** After an admin change to a tenant: every instance drops its copy. */
  invalidateTenant(tenantId: string): Promise<void> {
    return this.tenants.invalidate(tenantId);
  }
}

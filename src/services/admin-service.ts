/** Operator actions for the admin API and the CLI; every change invalidates the live config everywhere. */

import { frequencySubject } from '../admission/interceptors/frequency.js';
import { type Channel, perChannel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import { normalizeRecipient, readOnEveryChannel } from '../core/recipients.js';
import { hasControlCharacter } from '../core/text.js';
import { FALLBACK_MODES, type Limiter, normalizeRule } from '../limiter/index.js';
import { checkProviderSpec, credentialRouteFields, listedProviderConfig } from '../providers/registry.js';
import type { BlacklistRepository } from '../storage/repositories/blacklist.js';
import { type ProvidersRepository, type StoredProvider, UnopenableSecretError } from '../storage/repositories/providers.js';
import type { RiskRuleSet, RiskRulesRepository } from '../storage/repositories/risk-rules.js';
import { type RuleSet, type RulesRepository, toLimiterRule } from '../storage/repositories/rules.js';
import type { Tenant, TenantsRepository } from '../storage/repositories/tenants.js';
import { ANY, type ProviderKind, type StoredRule } from '../storage/schema.js';
import type {
  AdminService,
  ApiKeyView,
  BlacklistPage,
  BlacklistScope,
  FallbackView,
  NewProviderInput,
  ProviderPatch,
  ProviderView,
  RuleSetView,
  RuleView,
  TenantDetails,
  TenantPage,
} from './contracts.js';
import { checkRiskState, riskRulesOf } from './risk-rules.js';
import type { RiskRuleSetView, RiskRuleView } from './views.js';

/** What an admin change tells the tenant config cache (the tenant directory). */
export interface ConfigInvalidation {
  /** After a key is issued or revoked: every instance drops these keys' cached tenants. */
  invalidateApiKeys(keyHashes: string[]): Promise<void>;
  /** After a change to a tenant's status, quotas or rules. */
  invalidateTenant(tenantId: string): Promise<void>;
}

export interface AdminServiceDeps {
  tenants: TenantsRepository;
  rules: RulesRepository;
  riskRules: RiskRulesRepository;
  blacklist: BlacklistRepository;
  providers: ProvidersRepository;
  /** The tenant config cache: an admin change drops every instance's copy. */
  directory: ConfigInvalidation;
  /** The limiter holding recipients' bans. */
  limiter: Pick<Limiter, 'unban' | 'reset'>;
  defaultRegion: string;
  /** After an action's risk rule set changed in SQL: every instance drops its copy. */
  riskRulesChanged: (tenantId: string, action: string) => Promise<void>;
  /** After a blacklist change in SQL: refresh the in-process copies (this instance's before answering). */
  blacklistChanged: () => Promise<void>;
  /** `SLUICE_RISK_STATE_MAX_BYTES`: a risk rule set's most bytes of state for one event's values. */
  riskStateMaxBytes: number;
}

const riskRuleSetView = (stored: RiskRuleSet): RiskRuleSetView => ({
  action: stored.action,
  rules: stored.rules as RiskRuleView[],
  version: stored.version,
});

function providerView(provider: StoredProvider): ProviderView {
  return {
    ...provider,
    config: listedProviderConfig(provider.kind, provider.config),
    createdAt: new Date(provider.createdAt).toISOString(),
    updatedAt: new Date(provider.updatedAt).toISOString(),
  };
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
      dailyQuotas: perChannel((channel) => quotas[channel] ?? null),
      createdAt: new Date(tenant.createdAt).toISOString(),
    };
  }

  async createTenant(name: string, qpsLimit?: number | null) {
    const created = await this.deps.tenants.create({ name, qpsLimit: qpsLimit ?? null });
    return { id: created.tenant.id, name: created.tenant.name, apiKey: created.apiKey };
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

  async updateTenant(id: string, patch: Parameters<AdminService['updateTenant']>[1]) {
    const tenant = await this.deps.tenants.update(id, patch);
    if (!tenant) return undefined;
    await this.deps.directory.invalidateTenant(id);
    return this.details(tenant);
  }

  /** NOT_FOUND for an unknown tenant: its rules, blacklist and bans cannot be touched (the API's 404, the CLI's exit 1). */
  private async requireTenant(id: string): Promise<void> {
    if (!(await this.deps.tenants.get(id))) throw new SluiceError('NOT_FOUND', 'no such tenant');
  }

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
    await this.requireTenant(tenantId);
    const stored = await this.deps.rules.set(tenantId, channel, {
      rules: rules.map(storedRule),
      fallback: fallback ? { mode: fallback.mode, ...(fallback.rules ? { rules: fallback.rules.map(storedRule) } : {}) } : null,
    });
    await this.deps.directory.invalidateTenant(tenantId);
    return ruleSetView(channel, stored);
  }

  async getRules(tenantId: string, channel: Channel): Promise<RuleSetView> {
    await this.requireTenant(tenantId);
    return ruleSetView(channel, await this.deps.rules.get(tenantId, channel));
  }

  async setRiskRules(tenantId: string, action: string, rules: RiskRuleView[]): Promise<RiskRuleSetView> {
    checkRiskState(riskRulesOf(rules), this.deps.riskStateMaxBytes);
    await this.requireTenant(tenantId);
    const stored = await this.deps.riskRules.set(tenantId, action, rules);
    await this.deps.riskRulesChanged(tenantId, action);
    return riskRuleSetView(stored);
  }

  async getRiskRules(tenantId: string, action: string): Promise<RiskRuleSetView> {
    await this.requireTenant(tenantId);
    const stored = await this.deps.riskRules.get(tenantId, action);
    if (!stored) throw new SluiceError('NOT_FOUND', `no risk rule set for action "${action}"`, { details: { field: 'action' } });
    return riskRuleSetView(stored);
  }

  /**
   * The keys stored for blacklist entries, as sends are keyed (`recipientKey`): on `*`, the key of
   * each channel that reads the text (channels' keys never coincide), so the entry matches a send
   * on every one of them. `invalid`: texts no channel (or not the given one) reads.
   */
  private blacklistKeys(channel: Channel | '*', recipients: string[]): { valid: string[]; invalid: string[] } {
    const valid = new Set<string>();
    const invalid: string[] = [];
    for (const input of recipients) {
      const keys =
        channel === '*'
          ? readOnEveryChannel(input, this.deps.defaultRegion).map((reading) => reading.key)
          : ((result) => (result.ok ? [result.key] : []))(normalizeRecipient(channel, input, this.deps.defaultRegion));
      if (keys.length === 0) invalid.push(input);
      for (const key of keys) valid.add(key);
    }
    return { valid: [...valid], invalid };
  }

  /** The storage scope of a blacklist: the tenant's id (NOT_FOUND if unknown) or `*`. */
  private async blacklistScope(scope: BlacklistScope): Promise<string> {
    if (scope === 'global') return ANY;
    await this.requireTenant(scope.tenant);
    return scope.tenant;
  }

  async addToBlacklist(scope: BlacklistScope, channel: Channel | '*', recipients: string[], reason?: string) {
    const stored = await this.blacklistScope(scope);
    const { valid, invalid } = this.blacklistKeys(channel, recipients);
    for (const recipient of valid) await this.deps.blacklist.add({ scope: stored, channel, recipient, reason: reason ?? null });
    // The same reload and notice for the global list as for a tenant's: every instance holds the whole table.
    if (valid.length > 0) await this.deps.blacklistChanged();
    return { added: valid, invalid };
  }

  async removeFromBlacklist(scope: BlacklistScope, channel: Channel | '*', recipients: string[]) {
    const stored = await this.blacklistScope(scope);
    const { valid, invalid } = this.blacklistKeys(channel, recipients);
    let removed = 0;
    for (const recipient of valid) if (await this.deps.blacklist.remove({ scope: stored, channel, recipient })) removed++;
    if (removed > 0) await this.deps.blacklistChanged();
    return { removed, invalid };
  }

  async listBlacklist(
    scope: BlacklistScope,
    options: { channel?: Channel | '*'; limit?: number; after?: string } = {},
  ): Promise<BlacklistPage> {
    const limit = pageLimit(options.limit);
    const stored = await this.blacklistScope(scope);
    // One more than the page: whether there is a next page, without a count.
    const rows = await this.deps.blacklist.list(stored, {
      limit: limit + 1,
      ...(options.channel === undefined ? {} : { channel: options.channel }),
      ...(options.after === undefined ? {} : { after: decodeCursor(options.after) }),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page.map((entry) => ({
        channel: entry.channel,
        recipient: entry.recipient,
        reason: entry.reason,
        createdAt: new Date(entry.createdAt).toISOString(),
      })),
      next: rows.length > limit && last ? encodeCursor(last) : null,
    };
  }

  /** Builds the client once so a bad kind, channel, config field or missing secret is a 400 now, not a failed send later. */
  private checkProvider(
    name: string,
    spec: { kind: string; channel: Channel; config: Record<string, unknown>; secret: Record<string, string> },
  ): void {
    try {
      // It has no id yet: errors name it by its name.
      checkProviderSpec({ id: name, ...spec });
    } catch (error) {
      throw new SluiceError('INVALID_REQUEST', (error as Error).message, { details: { field: 'provider' } });
    }
  }

  async createProvider(input: NewProviderInput): Promise<ProviderView> {
    if (input.scope !== '*' && !(await this.deps.tenants.get(input.scope))) throw new SluiceError('NOT_FOUND', 'no such tenant (scope)');
    await this.requireUniqueName(input.scope, input.channel, input.name);
    this.checkProvider(input.name, { kind: input.kind, channel: input.channel, config: input.config ?? {}, secret: input.secret ?? {} });
    const created = await this.deps.providers.create({
      scope: input.scope,
      channel: input.channel,
      kind: input.kind as ProviderKind,
      name: input.name,
      qps: input.qps,
      ...(input.priority === undefined ? {} : { priority: input.priority }),
      ...(input.config ? { config: input.config } : {}),
      ...(input.secret ? { secret: JSON.stringify(input.secret) } : {}),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
    });
    return providerView(created);
  }

  /**
   * A provider's name is unique in its scope and channel, as a tenant's name is: the name is how
   * logs, metrics and send errors tell providers apart. CONFLICT otherwise. Checked here for the
   * message; the unique index (migration 0002) refuses the race this check cannot see.
   */
  private async requireUniqueName(scope: string, channel: Channel, name: string, exceptId?: string): Promise<void> {
    const taken = (await this.deps.providers.list({ scope, channel })).find(
      (provider) => provider.name === name && provider.id !== exceptId,
    );
    if (taken) {
      const where = scope === '*' ? 'for every tenant' : `for tenant ${scope}`;
      throw new SluiceError('CONFLICT', `${channel === 'email' ? 'an' : 'a'} ${channel} provider named "${name}" already exists ${where}`, {
        details: { name, id: taken.id },
      });
    }
  }

  async listProviders(filter: { scope?: string; channel?: Channel }): Promise<ProviderView[]> {
    return (await this.deps.providers.list(filter)).map(providerView);
  }

  async updateProvider(id: string, patch: ProviderPatch): Promise<ProviderView | undefined> {
    const current = await this.deps.providers.get(id);
    if (!current) return undefined;
    if (patch.name !== undefined && patch.name !== current.name)
      await this.requireUniqueName(current.scope, current.channel, patch.name, id);
    if (patch.config !== undefined || patch.secret !== undefined) {
      const secret = patch.secret === undefined ? await this.storedSecret(id) : (patch.secret ?? {});
      // The stored credentials go wherever the config points: sending them to a new address takes
      // someone who knows them, not only the config.
      const moved = credentialRouteFields(current.kind).filter(
        (field) => patch.config !== undefined && patch.config[field] !== current.config[field],
      );
      if (patch.secret === undefined && moved.length > 0 && Object.keys(secret).length > 0) {
        throw new SluiceError(
          'INVALID_REQUEST',
          `changing where or how the provider sends (config.${moved.join(', config.')}) takes its secret again, in the same change`,
          { details: { field: 'secret' } },
        );
      }
      this.checkProvider(patch.name ?? current.name, {
        kind: current.kind,
        channel: current.channel,
        config: patch.config ?? current.config,
        secret,
      });
    }
    const { secret, ...rest } = patch;
    const updated = await this.deps.providers.update(id, {
      ...rest,
      ...(secret === undefined ? {} : { secret: secret === null ? null : JSON.stringify(secret) }),
    });
    return updated && providerView(updated);
  }

  /**
   * The stored credentials, to check a change of `config` against. One sealed with another key
   * (SLUICE_SECRET_KEY changed, or a CLI run elsewhere that made its own key file) cannot be
   * opened: the change must then bring a new secret.
   */
  private async storedSecret(id: string): Promise<Record<string, string>> {
    let sealed: string | undefined;
    try {
      sealed = await this.deps.providers.revealSecret(id);
    } catch (error) {
      if (!(error instanceof UnopenableSecretError)) throw error;
      throw new SluiceError('INVALID_REQUEST', `${error.message}: send a new \`secret\` with the change`, { details: { field: 'secret' } });
    }
    return JSON.parse(sealed ?? '{}') as Record<string, string>;
  }

  deleteProvider(id: string): Promise<boolean> {
    return this.deps.providers.delete(id);
  }

  async liftBan(tenantId: string, channel: Channel, to: string, options: { resetCounts?: boolean } = {}): Promise<boolean> {
    await this.requireTenant(tenantId);
    const normalized = normalizeRecipient(channel, to, this.deps.defaultRegion);
    if (!normalized.ok) throw new SluiceError('INVALID_REQUEST', normalized.reason, { details: { field: 'to' } });
    const subject = frequencySubject(tenantId, channel, normalized.key);
    const lifted = await this.deps.limiter.unban(subject);
    if (options.resetCounts) await this.deps.limiter.reset(subject);
    return lifted;
  }
}

/** A page's size: 1 to 1000, 100 by default. */
function pageLimit(limit = 100): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new SluiceError('INVALID_REQUEST', `limit: ${limit} is not an integer from 1 to 1000`, { details: { field: 'limit' } });
  }
  return limit;
}

/** A blacklist page cursor: the last entry's key, opaque to callers. */
function encodeCursor(entry: { channel: string; recipient: string }): string {
  return Buffer.from(JSON.stringify([entry.channel, entry.recipient])).toString('base64url');
}

function decodeCursor(cursor: string): { channel: string; recipient: string } {
  try {
    const [channel, recipient] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    // A forged cursor's text reaches the query: PostgreSQL refuses NUL in text (a 503 otherwise).
    if (typeof channel === 'string' && typeof recipient === 'string' && !hasControlCharacter(channel + recipient))
      return { channel, recipient };
  } catch {
    // Refused below.
  }
  throw new SluiceError('INVALID_REQUEST', "after: not a cursor (use a page's `next`)", { details: { field: 'after' } });
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

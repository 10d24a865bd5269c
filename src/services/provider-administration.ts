/**
 * Delivery providers and their credentials, for the admin API and the CLI (contract:
 * `ProviderAdminService`). A provider's config and secret are checked by building its client, so
 * a bad one is refused now, not at its first send; the secret is sealed and never shown again.
 */
import type { Channel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import { checkProviderSpec, credentialRouteFields, listedProviderConfig } from '../providers/registry.js';
import { type ProvidersRepository, type StoredProvider, UnopenableSecretError } from '../storage/repositories/providers.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { ProviderKind } from '../storage/schema.js';
import type { NewProviderInput, ProviderAdminService, ProviderPatch, ProviderView } from './contracts.js';

export interface ProviderAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  providers: ProvidersRepository;
}

function providerView(provider: StoredProvider): ProviderView {
  return {
    ...provider,
    config: listedProviderConfig(provider.kind, provider.config),
    createdAt: new Date(provider.createdAt).toISOString(),
    updatedAt: new Date(provider.updatedAt).toISOString(),
  };
}

export class ProviderAdministration implements ProviderAdminService {
  constructor(private readonly deps: ProviderAdministrationDeps) {}

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
}

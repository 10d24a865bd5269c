/**
 * Provider accounts (vendor credentials per channel). `scope` is a tenant id (the tenant's own
 * account) or `'*'` (shared by every tenant). The secret (password, access-key secret, signing
 * key) is sealed with the {@link SecretBox} before it reaches SQL, bound to the provider id, and
 * opened only by {@link ProvidersRepository.revealSecret}; listings say only `hasSecret`.
 */
import type { Channel } from '../../core/channels.js';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { DuplicateNameError, isUniqueViolation } from '../errors.js';
import { newId } from '../ids.js';
import { ANY, type ProviderKind, type ProvidersTable } from '../schema.js';
import type { SecretBox } from '../secret-box.js';

/** A stored secret that this process's key cannot open: sealed with another `SLUICE_SECRET_KEY`, or altered. */
export class UnopenableSecretError extends Error {
  constructor(
    readonly providerId: string,
    cause: unknown,
  ) {
    super(
      `the stored secret of provider ${providerId} cannot be opened with this process's secret key (SLUICE_SECRET_KEY or SLUICE_SECRET_KEY_FILE): sealed with another key, or altered`,
      {
        cause,
      },
    );
    this.name = 'UnopenableSecretError';
  }
}

export interface StoredProvider {
  id: string;
  /** Tenant id, or `'*'` for a shared provider. */
  scope: string;
  channel: Channel;
  kind: ProviderKind;
  name: string;
  /** Lower is tried first; ties: tenant-scoped before shared, then by id. */
  priority: number;
  /** The vendor's QPS contract; the dispatcher paces to it. */
  qps: number;
  /** Non-secret settings. */
  config: Record<string, unknown>;
  /** Whether a secret is stored (see `revealSecret`). */
  hasSecret: boolean;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface NewProvider {
  scope: string;
  channel: Channel;
  kind: ProviderKind;
  name: string;
  priority?: number;
  qps: number;
  config?: Record<string, unknown>;
  /** Clear secret; sealed before storing. Needs a SecretBox. */
  secret?: string | null;
  enabled?: boolean;
}

/** Fields to change; `secret: null` removes the secret, `secret` omitted keeps it. */
export type ProviderChanges = Partial<Omit<NewProvider, 'scope' | 'channel'>>;

function toStoredProvider(row: ProvidersTable): StoredProvider {
  return {
    id: row.id,
    scope: row.scope,
    channel: row.channel,
    kind: row.kind,
    name: row.name,
    priority: Number(row.priority),
    qps: Number(row.qps),
    config: JSON.parse(row.config) as Record<string, unknown>,
    hasSecret: row.secret !== null,
    enabled: Number(row.enabled) === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export class ProvidersRepository {
  private readonly clock: Clock;
  private readonly secretBox: SecretBox | undefined;

  /** Without `secretBox`, providers can be stored and listed but not given or asked for secrets. */
  constructor(
    private readonly database: Database,
    options: { secretBox?: SecretBox; clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.secretBox = options.secretBox;
  }

  private box(): SecretBox {
    if (this.secretBox === undefined) throw new Error('Provider secrets need an encryption key (SLUICE_SECRET_KEY) and none is configured');
    return this.secretBox;
  }

  private seal(id: string, secret: string | null | undefined): string | null {
    return secret === undefined || secret === null ? null : this.box().seal(secret, id);
  }

  async create(input: NewProvider): Promise<StoredProvider> {
    const now = this.clock.now();
    const id = newId(now);
    const row: ProvidersTable = {
      id,
      scope: input.scope,
      channel: input.channel,
      kind: input.kind,
      name: input.name,
      priority: input.priority ?? 100,
      qps: input.qps,
      config: JSON.stringify(input.config ?? {}),
      secret: this.seal(id, input.secret),
      enabled: input.enabled === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.database.db.insertInto('providers').values(row).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateNameError('provider', input.name, error);
      throw error;
    }
    return toStoredProvider(row);
  }

  async get(id: string): Promise<StoredProvider | undefined> {
    const row = await this.database.db.selectFrom('providers').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toStoredProvider(row);
  }

  /**
   * @returns the updated provider, or `undefined` when there is no such provider.
   * @throws DuplicateNameError when renaming to a name taken in its scope and channel.
   */
  async update(id: string, changes: ProviderChanges): Promise<StoredProvider | undefined> {
    const result = await this.database.db
      .updateTable('providers')
      .set({
        updated_at: this.clock.now(),
        ...(changes.kind === undefined ? {} : { kind: changes.kind }),
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.priority === undefined ? {} : { priority: changes.priority }),
        ...(changes.qps === undefined ? {} : { qps: changes.qps }),
        ...(changes.config === undefined ? {} : { config: JSON.stringify(changes.config) }),
        ...(changes.secret === undefined ? {} : { secret: this.seal(id, changes.secret) }),
        ...(changes.enabled === undefined ? {} : { enabled: changes.enabled ? 1 : 0 }),
      })
      .where('id', '=', id)
      .executeTakeFirst()
      .catch((error: unknown) => {
        if (changes.name !== undefined && isUniqueViolation(error)) throw new DuplicateNameError('provider', changes.name, error);
        throw error;
      });
    return result.numUpdatedRows === 0n ? undefined : this.get(id);
  }

  /** @returns whether a provider was deleted. */
  async delete(id: string): Promise<boolean> {
    const result = await this.database.db.deleteFrom('providers').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Whether any provider is stored, enabled or not, for any tenant or channel. */
  async anyStored(): Promise<boolean> {
    const row = await this.database.db.selectFrom('providers').select('id').limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** Providers filtered by exact scope and/or channel (admin listing), by priority then id. */
  async list(filter: { scope?: string; channel?: Channel } = {}): Promise<StoredProvider[]> {
    let query = this.database.db.selectFrom('providers').selectAll().orderBy('priority').orderBy('id');
    if (filter.scope !== undefined) query = query.where('scope', '=', filter.scope);
    if (filter.channel !== undefined) query = query.where('channel', '=', filter.channel);
    return (await query.execute()).map(toStoredProvider);
  }

  /**
   * The enabled providers a tenant's message on `channel` may use — its own and the shared
   * ones — in failover order: priority ascending, then the tenant's own before shared ones.
   */
  async listEnabledFor(tenantId: string, channel: Channel): Promise<StoredProvider[]> {
    const rows = await this.database.db
      .selectFrom('providers')
      .selectAll()
      .where('channel', '=', channel)
      .where('scope', 'in', [tenantId, ANY])
      .where('enabled', '=', 1)
      .orderBy('priority')
      .orderBy('id')
      .execute();
    return rows
      .map(toStoredProvider)
      .sort(
        (a, b) => a.priority - b.priority || Number(a.scope === ANY) - Number(b.scope === ANY) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
  }

  /**
   * The clear secret of a provider, for the sender that needs it right now; never log it.
   * @returns `undefined` when the provider or its secret does not exist.
   * @throws when the stored value fails authentication (wrong key, tampered row).
   */
  async revealSecret(id: string): Promise<string | undefined> {
    const row = await this.database.db.selectFrom('providers').select('secret').where('id', '=', id).executeTakeFirst();
    if (row?.secret == null) return undefined;
    const box = this.box();
    try {
      return box.open(row.secret, id);
    } catch (error) {
      throw new UnopenableSecretError(id, error);
    }
  }
}

/**
 * Tenants, their API keys and daily quotas.
 *
 * API keys are `sk_` + 43 base64url characters (32 random bytes). Only the SHA-256 hex of a key
 * is stored: the keys carry 256 bits of entropy, so a slow password hash would add latency to
 * every request and no security. The clear key is returned once, by `create` and `rotateKey`.
 */
import { randomBytes } from 'node:crypto';
import type { Channel } from '../../core/channels.js';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { DuplicateNameError, isUniqueViolation } from '../errors.js';
import { newId, sha256Hex } from '../ids.js';
import type { TenantRow, TenantStatus } from '../schema.js';

export interface Tenant {
  id: string;
  name: string;
  status: TenantStatus;
  /** Tenant-wide requests per second; `null` = unlimited. */
  qpsLimit: number | null;
  /** Its share of the shared delivery pools against other tenants with due messages, {@link SEND_WEIGHT_MIN} to {@link SEND_WEIGHT_MAX}. */
  sendWeight: number;
  createdAt: number;
  updatedAt: number;
}

/** A tenant's send weight: 1 (the default, an equal share) to 100. */
export const SEND_WEIGHT_MIN = 1;
export const SEND_WEIGHT_MAX = 100;
export const DEFAULT_SEND_WEIGHT = 1;

/** An API key as listed: never the key itself, only its display prefix. */
export interface ApiKeyInfo {
  id: string;
  tenantId: string;
  /** First 12 characters of the clear key, e.g. `sk_3fZ0aQ1b…`. */
  keyPrefix: string;
  createdAt: number;
  revokedAt: number | null;
}

/** A key just issued: `apiKey` is the clear key, shown to the user once and stored nowhere. */
export interface IssuedApiKey {
  keyId: string;
  apiKey: string;
}

export interface TenantChanges {
  name?: string;
  status?: TenantStatus;
  /** `null` removes the limit. */
  qpsLimit?: number | null;
  /** 1 to 100. */
  sendWeight?: number;
  /** Per channel: a daily limit, or `null` to remove it. Channels not named keep theirs. */
  dailyQuotas?: Partial<Record<Channel, number | null>>;
}

/** Daily send limits per channel; a channel without an entry is unlimited. */
export type DailyQuotas = Partial<Record<Channel, number>>;

const KEY_PREFIX_LENGTH = 12;

/** SHA-256 hex of a clear API key: what `api_keys.key_hash` holds. */
export const hashApiKey = (apiKey: string): string => sha256Hex(apiKey);

function newApiKey(): string {
  return `sk_${randomBytes(32).toString('base64url')}`;
}

/** @throws RangeError unless an integer from 1 to 100 (the API refuses it first, with a 400). */
function checkSendWeight(weight: number): number {
  if (!Number.isInteger(weight) || weight < SEND_WEIGHT_MIN || weight > SEND_WEIGHT_MAX)
    throw new RangeError(`sendWeight must be an integer from ${SEND_WEIGHT_MIN} to ${SEND_WEIGHT_MAX}, got ${weight}`);
  return weight;
}

function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    qpsLimit: row.qps_limit,
    sendWeight: Number(row.send_weight),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export class TenantsRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  private get db() {
    return this.database.db;
  }

  /**
   * Creates an active tenant and its first API key, in one transaction.
   * @throws DuplicateNameError when the name is taken.
   */
  async create(input: {
    name: string;
    qpsLimit?: number | null;
    sendWeight?: number;
    dailyQuotas?: DailyQuotas;
  }): Promise<{ tenant: Tenant } & IssuedApiKey> {
    const now = this.clock.now();
    const row: TenantRow = {
      id: newId(now),
      name: input.name,
      status: 'active',
      qps_limit: input.qpsLimit ?? null,
      send_weight: checkSendWeight(input.sendWeight ?? DEFAULT_SEND_WEIGHT),
      created_at: now,
      updated_at: now,
    };
    try {
      const issued = await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('tenants').values(row).execute();
        for (const [channel, limit] of Object.entries(input.dailyQuotas ?? {})) {
          if (limit !== undefined)
            await trx
              .insertInto('tenant_quotas')
              .values({ tenant_id: row.id, channel: channel as Channel, daily_limit: limit })
              .execute();
        }
        return this.issueKey(trx, row.id, now);
      });
      return { tenant: toTenant(row), ...issued };
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateNameError('tenant', input.name, error);
      throw error;
    }
  }

  /**
   * The tenant owning a clear API key, if the key exists and is not revoked — whatever the
   * tenant's status (the admission chain checks `status` and answers TENANT_SUSPENDED).
   * One indexed lookup on `key_hash`.
   */
  async findByApiKey(apiKey: string): Promise<{ tenant: Tenant; keyId: string } | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .selectAll('tenants')
      .select('api_keys.id as key_id')
      .where('api_keys.key_hash', '=', hashApiKey(apiKey))
      .where('api_keys.revoked_at', 'is', null)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const { key_id, ...tenant } = row;
    return { tenant: toTenant(tenant), keyId: key_id };
  }

  async get(id: string): Promise<Tenant | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toTenant(row);
  }

  async findByName(name: string): Promise<Tenant | undefined> {
    const row = await this.db.selectFrom('tenants').selectAll().where('name', '=', name).executeTakeFirst();
    return row && toTenant(row);
  }

  /** The ids of every suspended tenant (few: the delivery watches this set for resumes). */
  async suspendedIds(): Promise<string[]> {
    const rows = await this.db.selectFrom('tenants').select('id').where('status', '=', 'suspended').execute();
    return rows.map((row) => row.id);
  }

  /**
   * Every tenant's send weight, by id: one read of two columns of the (small) tenants table,
   * for the delivery's fair order, which reads it every few seconds. A tenant created since is
   * missing until the next read: the caller takes {@link DEFAULT_SEND_WEIGHT} for it.
   */
  async sendWeights(): Promise<Map<string, number>> {
    const rows = await this.db.selectFrom('tenants').select(['id', 'send_weight']).execute();
    return new Map(rows.map((row) => [row.id, Number(row.send_weight)]));
  }

  /** Tenants ordered by id (creation order), `limit` at a time after the id `after`. */
  async list(options: { limit?: number; after?: string } = {}): Promise<Tenant[]> {
    let query = this.db
      .selectFrom('tenants')
      .selectAll()
      .orderBy('id')
      .limit(options.limit ?? 100);
    if (options.after !== undefined) query = query.where('id', '>', options.after);
    return (await query.execute()).map(toTenant);
  }

  /**
   * Applies `changes` (name, status, QPS, send weight, daily quotas) in one transaction.
   * @returns the updated tenant, or `undefined` when there is no such tenant.
   * @throws DuplicateNameError when renaming to a taken name.
   */
  async update(id: string, changes: TenantChanges): Promise<Tenant | undefined> {
    const now = this.clock.now();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('tenants')
          .set({
            updated_at: now,
            ...(changes.name === undefined ? {} : { name: changes.name }),
            ...(changes.status === undefined ? {} : { status: changes.status }),
            ...(changes.qpsLimit === undefined ? {} : { qps_limit: changes.qpsLimit }),
            ...(changes.sendWeight === undefined ? {} : { send_weight: checkSendWeight(changes.sendWeight) }),
          })
          .where('id', '=', id)
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return undefined;
        for (const [channel, limit] of Object.entries(changes.dailyQuotas ?? {})) {
          if (limit === undefined) continue;
          await trx
            .deleteFrom('tenant_quotas')
            .where('tenant_id', '=', id)
            .where('channel', '=', channel as Channel)
            .execute();
          if (limit !== null)
            await trx
              .insertInto('tenant_quotas')
              .values({ tenant_id: id, channel: channel as Channel, daily_limit: limit })
              .execute();
        }
        const row = await trx.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        return toTenant(row);
      });
    } catch (error) {
      if (changes.name !== undefined && isUniqueViolation(error)) throw new DuplicateNameError('tenant', changes.name, error);
      throw error;
    }
  }

  /** Sets (or with `null` removes) the daily limit of one channel. */
  async setDailyQuota(tenantId: string, channel: Channel, limit: number | null): Promise<void> {
    await this.update(tenantId, { dailyQuotas: { [channel]: limit } });
  }

  async getDailyQuotas(tenantId: string): Promise<DailyQuotas> {
    const rows = await this.db.selectFrom('tenant_quotas').select(['channel', 'daily_limit']).where('tenant_id', '=', tenantId).execute();
    const quotas: DailyQuotas = {};
    for (const row of rows) quotas[row.channel] = Number(row.daily_limit);
    return quotas;
  }

  /**
   * Issues a new key; by default revokes every other key of the tenant in the same transaction
   * (`revokeOthers: false` keeps them, for a rollover window: revoke them later with `revokeKey`).
   * @returns the new key and the hashes of the keys it revoked (what caches keyed by hash must
   * drop), or `undefined` when there is no such tenant.
   */
  async rotateKey(
    tenantId: string,
    options: { revokeOthers?: boolean } = {},
  ): Promise<(IssuedApiKey & { revokedHashes: string[] }) | undefined> {
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const tenant = await trx.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
      if (tenant === undefined) return undefined;
      let revokedHashes: string[] = [];
      if (options.revokeOthers ?? true) {
        // Read in the transaction that revokes them: a key issued meanwhile is not missed.
        revokedHashes = (
          await trx.selectFrom('api_keys').select('key_hash').where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).execute()
        ).map((row) => row.key_hash);
        await trx
          .updateTable('api_keys')
          .set({ revoked_at: now })
          .where('tenant_id', '=', tenantId)
          .where('revoked_at', 'is', null)
          .execute();
      }
      return { ...(await this.issueKey(trx, tenantId, now)), revokedHashes };
    });
  }

  /** The hash of one active key of the tenant (what caches keyed by hash must drop when it is revoked). */
  async activeKeyHash(tenantId: string, keyId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row?.key_hash;
  }

  /** Revokes one key. @returns false when the tenant has no such active key. */
  async revokeKey(tenantId: string, keyId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: this.clock.now() })
      .where('id', '=', keyId)
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** The tenant's keys (active and revoked), oldest first, without secrets. */
  async listKeys(tenantId: string): Promise<ApiKeyInfo[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
    return rows.map((row) => ({
      id: row.id,
      tenantId: row.tenant_id,
      keyPrefix: row.key_prefix,
      createdAt: Number(row.created_at),
      revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    }));
  }

  private async issueKey(trx: Database['db'], tenantId: string, now: number): Promise<IssuedApiKey> {
    const apiKey = newApiKey();
    const keyId = newId(now);
    await trx
      .insertInto('api_keys')
      .values({
        id: keyId,
        tenant_id: tenantId,
        key_hash: hashApiKey(apiKey),
        key_prefix: apiKey.slice(0, KEY_PREFIX_LENGTH),
        created_at: now,
        revoked_at: null,
      })
      .execute();
    return { keyId, apiKey };
  }
}

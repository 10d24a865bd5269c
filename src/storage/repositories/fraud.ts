/**
 * SMS pumping protection's configuration: a tenant's fraud policy per channel, and the price of a
 * message per channel. Both are stored as the JSON the admin API took (storage does not read it).
 */
import type { Channel } from '../../core/channels.js';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { isTransientConflict, isUniqueViolation } from '../errors.js';

export class FraudRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  async getPolicy(tenantId: string, channel: Channel): Promise<{ spec: Record<string, unknown>; updatedAt: number } | undefined> {
    const row = await this.database.db
      .selectFrom('fraud_policies')
      .select(['spec', 'updated_at'])
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .executeTakeFirst();
    return row && { spec: JSON.parse(row.spec) as Record<string, unknown>, updatedAt: Number(row.updated_at) };
  }

  /** Replaces the tenant's policy on the channel. */
  async setPolicy(tenantId: string, channel: Channel, spec: object): Promise<number> {
    const now = this.clock.now();
    const text = JSON.stringify(spec);
    await this.upsert(
      () =>
        this.database.db
          .updateTable('fraud_policies')
          .set({ spec: text, updated_at: now })
          .where('tenant_id', '=', tenantId)
          .where('channel', '=', channel)
          .executeTakeFirst(),
      () => this.database.db.insertInto('fraud_policies').values({ tenant_id: tenantId, channel, spec: text, updated_at: now }).execute(),
    );
    return now;
  }

  /** Every tenant's policy on the channel: for a change of the prices' currency, which each cap must share. */
  async listPolicies(channel: Channel): Promise<{ tenantId: string; spec: Record<string, unknown> }[]> {
    const rows = await this.database.db.selectFrom('fraud_policies').select(['tenant_id', 'spec']).where('channel', '=', channel).execute();
    return rows.map((row) => ({ tenantId: row.tenant_id, spec: JSON.parse(row.spec) as Record<string, unknown> }));
  }

  async getPrices(channel: Channel): Promise<{ spec: Record<string, unknown>; updatedAt: number } | undefined> {
    const row = await this.database.db
      .selectFrom('prices')
      .select(['spec', 'updated_at'])
      .where('channel', '=', channel)
      .executeTakeFirst();
    return row && { spec: JSON.parse(row.spec) as Record<string, unknown>, updatedAt: Number(row.updated_at) };
  }

  async setPrices(channel: Channel, spec: object): Promise<number> {
    const now = this.clock.now();
    const text = JSON.stringify(spec);
    await this.upsert(
      () => this.database.db.updateTable('prices').set({ spec: text, updated_at: now }).where('channel', '=', channel).executeTakeFirst(),
      () => this.database.db.insertInto('prices').values({ channel, spec: text, updated_at: now }).execute(),
    );
    return now;
  }

  /** UPDATE, then INSERT, retried once on a racing insert. */
  private async upsert(update: () => Promise<{ numUpdatedRows: bigint }>, insert: () => Promise<unknown>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if ((await update()).numUpdatedRows > 0n) return;
      try {
        await insert();
        return;
      } catch (error) {
        if (attempt < 1 && (isUniqueViolation(error) || isTransientConflict(error))) continue;
        throw error;
      }
    }
  }
}

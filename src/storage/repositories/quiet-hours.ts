/** Quiet hours, one spec per (tenant, channel); a PUT replaces it, a DELETE removes it. */
import type { Channel } from '../../core/channels.js';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { isTransientConflict, isUniqueViolation } from '../errors.js';

/** The stored JSON (admission/quiet-hours.ts `QuietHours`: storage does not read it). */
export type StoredQuietHours = { timeZone: string; windows: { from: string; to: string }[]; applies: 'bulk' | 'all' };

export class QuietHoursRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  async get(tenantId: string, channel: Channel): Promise<(StoredQuietHours & { updatedAt: number }) | undefined> {
    const row = await this.database.db
      .selectFrom('quiet_hours')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .executeTakeFirst();
    return row && { ...(JSON.parse(row.spec) as StoredQuietHours), updatedAt: Number(row.updated_at) };
  }

  /** Replaces the quiet hours of (tenant, channel): UPDATE, then INSERT, retried once on a racing insert. */
  async set(tenantId: string, channel: Channel, spec: StoredQuietHours): Promise<void> {
    const now = this.clock.now();
    const text = JSON.stringify({ timeZone: spec.timeZone, windows: spec.windows, applies: spec.applies });
    for (let attempt = 0; ; attempt++) {
      const updated = await this.database.db
        .updateTable('quiet_hours')
        .set({ spec: text, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('channel', '=', channel)
        .executeTakeFirst();
      if (updated.numUpdatedRows > 0n) return;
      try {
        await this.database.db.insertInto('quiet_hours').values({ tenant_id: tenantId, channel, spec: text, updated_at: now }).execute();
        return;
      } catch (error) {
        if (attempt < 1 && (isUniqueViolation(error) || isTransientConflict(error))) continue;
        throw error;
      }
    }
  }

  /** @returns false when there were none. */
  async remove(tenantId: string, channel: Channel): Promise<boolean> {
    const deleted = await this.database.db
      .deleteFrom('quiet_hours')
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .executeTakeFirst();
    return deleted.numDeletedRows > 0n;
  }
}

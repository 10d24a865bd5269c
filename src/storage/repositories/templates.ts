/**
 * Message templates, per (tenant, channel, name), one row per version. A PUT adds the next
 * version; the current one is the highest, unless the template was retired (DELETE sets
 * `retired_at` on every version, and a later PUT makes a new live version). Old versions stay, so
 * an accepted message's pinned version can always be read back.
 */
import type { Channel } from '../../core/channels.js';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { isTransientConflict, isUniqueViolation } from '../errors.js';
import type { MessageTemplatesTable } from '../schema.js';

/** The stored JSON of one version (admission/templates.ts `TemplateSpec`: storage does not read it). */
export type StoredTemplateSpec = Record<string, unknown>;

export interface TemplateVersion {
  tenantId: string;
  channel: Channel;
  name: string;
  version: number;
  spec: StoredTemplateSpec;
  createdAt: number;
  retiredAt: number | null;
}

const toVersion = (row: MessageTemplatesTable): TemplateVersion => ({
  tenantId: row.tenant_id,
  channel: row.channel,
  name: row.name,
  version: Number(row.version),
  spec: JSON.parse(row.spec) as StoredTemplateSpec,
  createdAt: Number(row.created_at),
  retiredAt: row.retired_at === null ? null : Number(row.retired_at),
});

export class TemplatesRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Stores `spec` as the next version (1 for a new name). Two concurrent PUTs of one name both
   * get a version: the loser of the primary key retries with the next number. Fails with a
   * foreign-key error when the tenant does not exist.
   */
  async put(tenantId: string, channel: Channel, name: string, spec: StoredTemplateSpec): Promise<TemplateVersion> {
    for (let attempt = 0; ; attempt++) {
      const now = this.clock.now();
      const latest = await this.database.db
        .selectFrom('message_templates')
        .select((eb) => eb.fn.max('version').as('version'))
        .where('tenant_id', '=', tenantId)
        .where('channel', '=', channel)
        .where('name', '=', name)
        .executeTakeFirst();
      const row: MessageTemplatesTable = {
        tenant_id: tenantId,
        channel,
        name,
        version: Number(latest?.version ?? 0) + 1,
        spec: JSON.stringify(spec),
        created_at: now,
        retired_at: null,
      };
      try {
        await this.database.db.insertInto('message_templates').values(row).execute();
        return toVersion(row);
      } catch (error) {
        if (attempt < 5 && (isUniqueViolation(error) || isTransientConflict(error))) continue;
        throw error;
      }
    }
  }

  /** Every version of the template, newest first (empty: never stored). */
  async versions(tenantId: string, channel: Channel, name: string): Promise<TemplateVersion[]> {
    return (await this.newestFirst(tenantId, channel, name).execute()).map(toVersion);
  }

  /** The current version, or undefined when none was stored or the template is retired. */
  async current(tenantId: string, channel: Channel, name: string): Promise<TemplateVersion | undefined> {
    const row = await this.newestFirst(tenantId, channel, name).limit(1).executeTakeFirst();
    return row && row.retired_at === null ? toVersion(row) : undefined;
  }

  /** The versions of one template, newest first. */
  private newestFirst(tenantId: string, channel: Channel, name: string) {
    return this.database.db
      .selectFrom('message_templates')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .where('name', '=', name)
      .orderBy('version', 'desc');
  }

  /** The current version of every live template of the tenant (on one channel, or all), by channel and name. */
  async listCurrent(tenantId: string, channel?: Channel): Promise<TemplateVersion[]> {
    let query = this.database.db.selectFrom('message_templates').selectAll().where('tenant_id', '=', tenantId);
    if (channel) query = query.where('channel', '=', channel);
    const rows = await query.orderBy('channel').orderBy('name').orderBy('version', 'desc').execute();
    const latest = new Map<string, MessageTemplatesTable>();
    for (const row of rows) if (!latest.has(`${row.channel}\u0000${row.name}`)) latest.set(`${row.channel}\u0000${row.name}`, row);
    return [...latest.values()].filter((row) => row.retired_at === null).map(toVersion);
  }

  /** Retires the template (every version). @returns false when it had no live version. */
  async retire(tenantId: string, channel: Channel, name: string): Promise<boolean> {
    if (!(await this.current(tenantId, channel, name))) return false;
    await this.database.db
      .updateTable('message_templates')
      .set({ retired_at: this.clock.now() })
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .where('name', '=', name)
      .where('retired_at', 'is', null)
      .execute();
    return true;
  }
}

/**
 * Blacklisted recipients. An entry's `scope` is a tenant id or `'*'` (global) and its `channel`
 * a channel or `'*'` (every channel). Recipients are canonical keys made by the caller
 * (`normalizeRecipient`'s `key`): storage compares them byte for byte.
 */
import type { Channel } from '../../core/channels.js';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { isUniqueViolation } from '../errors.js';
import { ANY } from '../schema.js';

export interface BlacklistEntry {
  /** Tenant id, or `'*'` for the global list. */
  scope: string;
  channel: Channel | typeof ANY;
  recipient: string;
  reason: string | null;
  createdAt: number;
}

/** Changes when an entry is added or removed: the row count and the newest entry's time. */
export interface BlacklistFingerprint {
  count: number;
  newest: number | null;
}

export class BlacklistRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Adds an entry. Idempotent: adding an existing entry changes nothing.
   * @returns true when the entry is new.
   */
  async add(entry: { scope: string; channel: Channel | typeof ANY; recipient: string; reason?: string | null }): Promise<boolean> {
    try {
      await this.database.db
        .insertInto('blacklist')
        .values({
          scope: entry.scope,
          channel: entry.channel,
          recipient: entry.recipient,
          reason: entry.reason ?? null,
          created_at: this.clock.now(),
        })
        .execute();
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /** @returns true when an entry was removed. */
  async remove(entry: { scope: string; channel: Channel | typeof ANY; recipient: string }): Promise<boolean> {
    const result = await this.database.db
      .deleteFrom('blacklist')
      .where('scope', '=', entry.scope)
      .where('channel', '=', entry.channel)
      .where('recipient', '=', entry.recipient)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * Entries of one scope (a tenant id or `'*'`), optionally of one channel value, ordered by
   * (channel, recipient); page with `after` = the last entry seen.
   */
  async list(
    scope: string,
    options: { channel?: Channel | typeof ANY; limit?: number; after?: { channel: string; recipient: string } } = {},
  ): Promise<BlacklistEntry[]> {
    let query = this.database.db
      .selectFrom('blacklist')
      .selectAll()
      .where('scope', '=', scope)
      .orderBy('channel')
      .orderBy('recipient')
      .limit(options.limit ?? 100);
    if (options.channel !== undefined) query = query.where('channel', '=', options.channel);
    const after = options.after;
    if (after !== undefined) {
      query = query.where((eb) =>
        eb.or([
          eb('channel', '>', after.channel as Channel),
          eb.and([eb('channel', '=', after.channel as Channel), eb('recipient', '>', after.recipient)]),
        ]),
      );
    }
    const rows = await query.execute();
    return rows.map((row) => ({
      scope: row.scope,
      channel: row.channel,
      recipient: row.recipient,
      reason: row.reason,
      createdAt: Number(row.created_at),
    }));
  }

  /**
   * Whether `recipient` is blocked for `tenantId` on `channel`: by the tenant's or the global
   * list, for this channel or for every channel. One primary-key query (4 key combinations).
   */
  async isBlacklisted(tenantId: string, channel: Channel, recipient: string): Promise<boolean> {
    const row = await this.database.db
      .selectFrom('blacklist')
      .select('recipient')
      .where('scope', 'in', [tenantId, ANY])
      .where('channel', 'in', [channel, ANY])
      .where('recipient', '=', recipient)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Every entry's key (scope, channel, recipient), at most `limit` of them: for the in-process copy. */
  all(limit: number): Promise<{ scope: string; channel: Channel | typeof ANY; recipient: string }[]> {
    return this.database.db.selectFrom('blacklist').select(['scope', 'channel', 'recipient']).limit(limit).execute();
  }

  async fingerprint(): Promise<BlacklistFingerprint> {
    const row = await this.database.db
      .selectFrom('blacklist')
      .select((eb) => [eb.fn.countAll().as('count'), eb.fn.max('created_at').as('newest')])
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), newest: row.newest === null ? null : Number(row.newest) };
  }
}

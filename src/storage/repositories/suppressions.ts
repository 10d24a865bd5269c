/**
 * Suppressions and the consent record (0020). A suppression is keyed by tenant, channel, the
 * recipient's canonical key (as the blacklist and the message's `recipientKey`) and a category
 * (`*`: every category, and sends that name none). Every change is appended to
 * `consent_records` in the transaction that makes it, with its source and evidence; records
 * are never updated, so the history shows each opt-out, opt-in and manual change.
 */
import { CompiledQuery } from 'kysely';
import type { Channel } from '../../core/channels.js';
import type { Database } from '../database.js';
import { isUniqueViolation } from '../errors.js';
import { newId } from '../ids.js';
import { ANY, type ConsentAction, type ConsentSource } from '../schema.js';

/** A recipient who must not be sent to, on one channel, for one category or every one (`*`). */
export interface Suppression {
  channel: Channel;
  recipient: string;
  category: string;
  source: ConsentSource;
  reason: string | null;
  createdAt: number;
}

/** One line of a recipient's consent history. */
export interface ConsentRecord {
  id: string;
  channel: Channel;
  recipient: string;
  category: string;
  action: ConsentAction;
  source: ConsentSource;
  reason: string | null;
  /** What shows the change was asked for: the inbound message, the POST's address, the feed event… */
  evidence: Record<string, unknown> | null;
  createdAt: number;
}

/** A change of one suppression, as its caller saw it. */
export interface ConsentChange {
  tenantId: string;
  channel: Channel;
  /** The canonical key. */
  recipient: string;
  /** A category, or `*`. */
  category: string;
  source: ConsentSource;
  reason?: string | null;
  evidence?: Record<string, unknown> | null;
  now: number;
}

/** Filters of a suppression listing. */
export interface SuppressionFilter {
  channel?: Channel;
  category?: string;
  source?: ConsentSource;
  limit?: number;
  /** The last entry of the previous page. */
  after?: { channel: string; recipient: string; category: string };
}

export class SuppressionsRepository {
  constructor(private readonly database: Database) {}

  /**
   * The suppression that stops a send of `category` (undefined: the send names none) to this
   * recipient: the one of its category, else the one of every category. One primary-key query.
   */
  async find(tenantId: string, channel: Channel, recipient: string, category?: string): Promise<Suppression | undefined> {
    const categories = category === undefined || category === ANY ? [ANY] : [category, ANY];
    const parameters = [tenantId, channel, recipient, ...categories];
    // Built once per category count: building the query with Kysely was most of the check's CPU
    // on the accept path (bench/suppression.ts).
    let text = this.findTexts[categories.length - 1];
    if (text === undefined) {
      const compiled = this.findQuery(tenantId, channel, recipient, categories).compile();
      text = compiled.sql;
      this.findTexts[categories.length - 1] = text;
    }
    const rows = (await this.database.db.executeQuery<SuppressionRow>(CompiledQuery.raw(text, parameters))).rows;
    const row = rows.find((candidate) => candidate.category !== ANY) ?? rows[0];
    return row === undefined ? undefined : toSuppression(row);
  }

  private readonly findTexts: (string | undefined)[] = [];

  private findQuery(tenantId: string, channel: Channel, recipient: string, categories: string[]) {
    return this.database.db
      .selectFrom('suppressions')
      .select(['channel', 'recipient', 'category', 'source', 'reason', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .where('recipient', '=', recipient)
      .where('category', 'in', categories);
  }

  /** Every suppression of one recipient (each category). */
  async ofRecipient(tenantId: string, channel: Channel, recipient: string): Promise<Suppression[]> {
    const rows = await this.database.db
      .selectFrom('suppressions')
      .select(['channel', 'recipient', 'category', 'source', 'reason', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .where('recipient', '=', recipient)
      .orderBy('category')
      .execute();
    return rows.map(toSuppression);
  }

  /**
   * Suppresses (idempotent: an existing suppression keeps its first source and time) and appends
   * the record, in one transaction. @returns the suppression in force and whether it is new.
   */
  async suppress(change: ConsentChange): Promise<{ suppression: Suppression; created: boolean }> {
    try {
      return await this.suppressOnce(change);
    } catch (error) {
      // Two changes for one key at once: the loser's transaction ended; the row is there now.
      if (isUniqueViolation(error)) return this.suppressOnce(change);
      throw error;
    }
  }

  private suppressOnce(change: ConsentChange): Promise<{ suppression: Suppression; created: boolean }> {
    return this.database.db.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom('suppressions')
        .select(['channel', 'recipient', 'category', 'source', 'reason', 'created_at'])
        .where('tenant_id', '=', change.tenantId)
        .where('channel', '=', change.channel)
        .where('recipient', '=', change.recipient)
        .where('category', '=', change.category)
        .executeTakeFirst();
      const row = existing ?? {
        channel: change.channel,
        recipient: change.recipient,
        category: change.category,
        source: change.source,
        reason: change.reason ?? null,
        created_at: change.now,
      };
      if (!existing)
        await trx
          .insertInto('suppressions')
          .values({ tenant_id: change.tenantId, ...row })
          .execute();
      await trx.insertInto('consent_records').values(recordRow(change, 'suppressed')).execute();
      return { suppression: toSuppression(row), created: !existing };
    });
  }

  /** Lifts the suppression of this category (an opt-in) and appends the record. @returns whether one was lifted. */
  unsuppress(change: ConsentChange): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom('suppressions')
        .where('tenant_id', '=', change.tenantId)
        .where('channel', '=', change.channel)
        .where('recipient', '=', change.recipient)
        .where('category', '=', change.category)
        .executeTakeFirst();
      await trx.insertInto('consent_records').values(recordRow(change, 'unsuppressed')).execute();
      return result.numDeletedRows > 0n;
    });
  }

  /** A tenant's suppressions, ordered by (channel, recipient, category); page with `after`. */
  async list(tenantId: string, filter: SuppressionFilter = {}): Promise<Suppression[]> {
    let query = this.database.db
      .selectFrom('suppressions')
      .select(['channel', 'recipient', 'category', 'source', 'reason', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .orderBy('channel')
      .orderBy('recipient')
      .orderBy('category')
      .limit(filter.limit ?? 100);
    if (filter.channel !== undefined) query = query.where('channel', '=', filter.channel);
    if (filter.category !== undefined) query = query.where('category', '=', filter.category);
    if (filter.source !== undefined) query = query.where('source', '=', filter.source);
    const after = filter.after;
    if (after !== undefined) {
      query = query.where((eb) =>
        eb.or([
          eb('channel', '>', after.channel as Channel),
          eb.and([eb('channel', '=', after.channel as Channel), eb('recipient', '>', after.recipient)]),
          eb.and([
            eb('channel', '=', after.channel as Channel),
            eb('recipient', '=', after.recipient),
            eb('category', '>', after.category),
          ]),
        ]),
      );
    }
    return (await query.execute()).map(toSuppression);
  }

  /** One recipient's consent history in the tenant, oldest first; page with `afterId`. */
  async history(tenantId: string, channel: Channel, recipient: string, options: { limit?: number; afterId?: string } = {}) {
    let query = this.database.db
      .selectFrom('consent_records')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .where('recipient', '=', recipient)
      .orderBy('id')
      .limit(options.limit ?? 100);
    if (options.afterId !== undefined) query = query.where('id', '>', options.afterId);
    const rows = await query.execute();
    return rows.map(
      (row): ConsentRecord => ({
        id: row.id,
        channel: row.channel,
        recipient: row.recipient,
        category: row.category,
        action: row.action,
        source: row.source,
        reason: row.reason,
        evidence: row.evidence === null ? null : (JSON.parse(row.evidence) as Record<string, unknown>),
        createdAt: Number(row.created_at),
      }),
    );
  }
}

function recordRow(change: ConsentChange, action: ConsentAction) {
  return {
    id: newId(change.now),
    tenant_id: change.tenantId,
    channel: change.channel,
    recipient: change.recipient,
    category: change.category,
    action,
    source: change.source,
    reason: change.reason ?? null,
    evidence: change.evidence ? JSON.stringify(change.evidence) : null,
    created_at: change.now,
  };
}

interface SuppressionRow {
  channel: Channel;
  recipient: string;
  category: string;
  source: ConsentSource;
  reason: string | null;
  created_at: number;
}

function toSuppression(row: SuppressionRow): Suppression {
  return {
    channel: row.channel,
    recipient: row.recipient,
    category: row.category,
    source: row.source,
    reason: row.reason,
    createdAt: Number(row.created_at),
  };
}

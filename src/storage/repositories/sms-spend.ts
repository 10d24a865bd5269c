/**
 * Each tenant's estimated SMS spend per calendar month (UTC), in millionths of the prices'
 * currency: money, so it is kept in SQL, the source of truth, not in Redis (which holds only what
 * can be rebuilt or may expire). A reserve is a conditional UPDATE (`spent + cost <= cap`): the
 * row's lock (one writer at a time on SQLite) makes it exact however many instances reserve at
 * once. Reserves and releases of one event-loop turn share one transaction (group commit), and
 * within it the reserves of one tenant and month go as one UPDATE while their sum fits the cap, so
 * the accept path pays a share of a statement per send. That transaction does not wait for its
 * fsync: the message insert after it does, and on SQLite the WAL makes that sync cover it too.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import { type GroupCommitOptions, GroupCommitWriter } from '../group-commit.js';
import type { Tables } from '../schema.js';

type SpendItem =
  | { kind: 'reserve'; tenantId: string; month: string; costMicros: number; capMicros: number; now: number }
  | { kind: 'release'; tenantId: string; month: string; costMicros: number; now: number };

/** The calendar month (UTC) of `ms`: `2026-12`. */
export const monthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

const reserveOne = async (trx: Kysely<Tables>, tenantId: string, month: string, cost: number, cap: number, now: number) =>
  (
    await trx
      .updateTable('sms_spend')
      .set({ spent_micros: sql`spent_micros + ${cost}`, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('month', '=', month)
      .where(sql<number>`spent_micros + ${cost}`, '<=', cap)
      .executeTakeFirst()
  ).numUpdatedRows > 0n;

/**
 * A reserve that creates the tenant's month row when it is missing: the common case is one UPDATE;
 * only a reserve that changed nothing looks for the row (an insert racing another instance's fails
 * this batch, whose items are then written one by one and find the row).
 */
async function reserveCreating(trx: Kysely<Tables>, tenantId: string, month: string, cost: number, cap: number, now: number) {
  if (await reserveOne(trx, tenantId, month, cost, cap, now)) return true;
  const found = await trx
    .selectFrom('sms_spend')
    .select('month')
    .where('tenant_id', '=', tenantId)
    .where('month', '=', month)
    .executeTakeFirst();
  if (found) return false;
  await trx.insertInto('sms_spend').values({ tenant_id: tenantId, month, spent_micros: 0, updated_at: now }).execute();
  return reserveOne(trx, tenantId, month, cost, cap, now);
}

const releaseOne = (trx: Kysely<Tables>, tenantId: string, month: string, cost: number, now: number) =>
  trx
    .updateTable('sms_spend')
    .set({ spent_micros: sql`case when spent_micros > ${cost} then spent_micros - ${cost} else 0 end`, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('month', '=', month)
    .execute();

/**
 * One batch: the reserves grouped by (tenant, month, cap), each group one UPDATE of its sum when
 * that fits and one UPDATE per reserve, in order, when not (creating a missing month row); then
 * releases (a release follows its reserve, so its row exists).
 */
async function writeBatch(trx: Kysely<Tables>, items: readonly SpendItem[]): Promise<boolean[]> {
  const results = items.map(() => true);
  const groups = new Map<string, number[]>();
  items.forEach((item, index) => {
    if (item.kind !== 'reserve') return;
    const key = `${item.tenantId} ${item.month} ${item.capMicros}`;
    const group = groups.get(key) ?? [];
    group.push(index);
    groups.set(key, group);
  });
  for (const indexes of groups.values()) {
    const first = items[indexes[0]!] as Extract<SpendItem, { kind: 'reserve' }>;
    const sum = indexes.reduce((total, index) => total + items[index]!.costMicros, 0);
    if (indexes.length > 1 && (await reserveOne(trx, first.tenantId, first.month, sum, first.capMicros, first.now))) continue;
    for (const index of indexes) {
      const item = items[index] as Extract<SpendItem, { kind: 'reserve' }>;
      results[index] = await reserveCreating(trx, item.tenantId, item.month, item.costMicros, item.capMicros, item.now);
    }
  }
  for (const item of items) if (item.kind === 'release') await releaseOne(trx, item.tenantId, item.month, item.costMicros, item.now);
  return results;
}

export class SmsSpendRepository {
  private readonly writer: GroupCommitWriter<SpendItem, boolean>;

  constructor(
    private readonly database: Database,
    options: { groupCommit?: GroupCommitOptions } = {},
  ) {
    this.writer = new GroupCommitWriter(database, writeBatch, options.groupCommit, () => true);
  }

  /** Adds `costMicros` to the tenant's `month` if the total stays within `capMicros`: true; else adds nothing: false. */
  reserve(tenantId: string, month: string, costMicros: number, capMicros: number, now: number): Promise<boolean> {
    return this.writer.write({ kind: 'reserve', tenantId, month, costMicros, capMicros, now });
  }

  /** Takes `costMicros` back from the tenant's `month`, never below zero. */
  async release(tenantId: string, month: string, costMicros: number, now: number): Promise<void> {
    await this.writer.write({ kind: 'release', tenantId, month, costMicros, now });
  }

  /**
   * Gives a canceled message's charge back to the month it was charged to, once: the message's
   * `cost_micros` is cleared by a guarded UPDATE in the same transaction, so a repeated cancel
   * gives nothing. Resolves what was given back (0: nothing was charged, or it was given already).
   */
  refund(tenantId: string, messageId: string, now: number): Promise<number> {
    return this.database.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('messages')
        .select(['cost_micros', 'created_at'])
        .where('id', '=', messageId)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      const cost = row?.cost_micros == null ? 0 : Number(row.cost_micros);
      if (cost === 0) return 0;
      const cleared = await trx
        .updateTable('messages')
        .set({ cost_micros: null })
        .where('id', '=', messageId)
        .where('cost_micros', 'is not', null)
        .executeTakeFirst();
      if (cleared.numUpdatedRows === 0n) return 0;
      await releaseOne(trx, tenantId, monthOf(Number(row!.created_at)), cost, now);
      return cost;
    });
  }

  /** The tenant's spend in `month`, in millionths (0 when nothing was charged). */
  async spent(tenantId: string, month: string): Promise<number> {
    const row = await this.database.db
      .selectFrom('sms_spend')
      .select('spent_micros')
      .where('tenant_id', '=', tenantId)
      .where('month', '=', month)
      .executeTakeFirst();
    return row ? Number(row.spent_micros) : 0;
  }

  /** Waits for every reserve and release already submitted. */
  drain(): Promise<void> {
    return this.writer.drain();
  }
}

/**
 * The broker hand-off's statements (docs/operations.md, "Brokers"). A due message is *handed off*
 * when it is published to the broker: `handed_off_at` is set by one guarded UPDATE per batch, so
 * the due index and the due query leave it to the broker. It is taken again only by the sweep:
 * once its hand-off is older than `republishBefore` (the bound SLUICE_BROKER_REPUBLISH_AFTER_MS,
 * or the time the broker's store began, whichever is later), while it is still unfinished.
 */
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Channel } from '../../../core/channels.js';
import type { DialectCapabilities } from '../../database.js';
import type { Tables } from '../../schema.js';
import { byLaneThenDue, notSuspended, partitionQuery } from './conditions.js';
import { type DueIndexEntry, indexEntries } from './due.js';
import { type PartitionSelector, PENDING_STATUSES } from './types.js';

/** A message just handed off: what its broker job carries. */
export interface HandedOff {
  id: string;
  tenantId: string;
  channel: Channel;
  shard: number;
  /** Claims so far: the job's attempt (its de-duplication id is `<id>:<attempts>`). */
  attempts: number;
  dueAt: number;
  priority: 'transactional' | 'bulk';
}

/** A hand-off's parameters. */
export interface HandOffOptions {
  now: number;
  /** Rows handed off before this (epoch ms) are taken again: the sweep's bound, or the broker's store's start. */
  republishBefore: number;
}

/**
 * Rows a hand-off at `now` may take: pending and due, or `sending` with an expired lease (its worker
 * died), in either case not handed off since `republishBefore`. A CASE, as in `claimable`, so the
 * ids are looked up by primary key.
 */
const handOffable = ({ now, republishBefore }: HandOffOptions) =>
  sql<boolean>`CASE WHEN status IN (${sql.join(PENDING_STATUSES)}) THEN due_at <= ${now} WHEN status = ${'sending'} THEN lease_until < ${now} ELSE FALSE END AND (handed_off_at IS NULL OR handed_off_at < ${republishBefore})`;

/**
 * Marks those of `ids` (distinct, at most 500) that may be handed off at `now` as handed off, in
 * one guarded UPDATE stamping a random token (read back by it without `returning`).
 * @returns the rows this call marked, transactional first, then by due time and id.
 */
export async function handOffIds(
  trx: Kysely<Tables>,
  capabilities: DialectCapabilities,
  ids: readonly string[],
  options: HandOffOptions,
): Promise<HandedOff[]> {
  if (ids.length === 0) return [];
  const token = randomBytes(12).toString('base64url');
  const update = trx
    .updateTable('messages')
    .set({ handed_off_at: options.now, claim_token: token })
    .where('id', 'in', ids)
    .where(handOffable(options))
    .where(notSuspended);
  const columns = ['id', 'tenant_id', 'channel', 'shard', 'attempts', 'due_at', 'priority'] as const;
  let rows: { id: string; tenant_id: string; channel: Channel; shard: number; attempts: number; due_at: number; priority: number }[];
  if (capabilities.returning) rows = await update.returning(columns).execute();
  else {
    const moved = await update.executeTakeFirst();
    if (moved.numUpdatedRows === 0n) return [];
    rows = await trx.selectFrom('messages').select(columns).where('id', 'in', ids).where('claim_token', '=', token).execute();
  }
  return rows.sort(byLaneThenDue).map((row) => ({
    id: row.id,
    tenantId: row.tenant_id,
    channel: row.channel,
    shard: Number(row.shard),
    attempts: Number(row.attempts),
    dueAt: Number(row.due_at),
    priority: Number(row.priority) === 1 ? 'bulk' : 'transactional',
  }));
}

/** Un-marks `ids` still marked by the hand-off at `handedOffAt` (its publish failed): they are due for a hand-off again. */
export async function returnHandOffs(db: Kysely<Tables>, ids: readonly string[], handedOffAt: number): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('messages')
    .set({ handed_off_at: null })
    .where('id', 'in', ids)
    .where('handed_off_at', '=', handedOffAt)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Un-marks a pending message whose job the broker no longer holds (a worker acked it without
 * sending: its tenant suspended, not due yet, the delivery limit reached), so the due index or the
 * due query hands it off again. @returns whether it was pending.
 */
export async function handBack(db: Kysely<Tables>, id: string): Promise<boolean> {
  const result = await db
    .updateTable('messages')
    .set({ handed_off_at: null })
    .where('id', '=', id)
    .where('status', 'in', PENDING_STATUSES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The embedded due query of the hand-off: up to `limit` ids of the partition to hand off at `now`,
 * transactional first, each lane by due time. Pending rows never handed off always; with
 * `republishBefore` (the sweep, once per poll) also those handed off before it and `sending` ones
 * whose lease expired, first.
 */
export async function handOffCandidates(
  db: Kysely<Tables>,
  selector: PartitionSelector & { now: number; limit: number; republishBefore?: number },
): Promise<string[]> {
  const { now, limit, republishBefore } = selector;
  const ids: string[] = [];
  if (republishBefore !== undefined) {
    const stale = await partitionQuery(db, selector)
      .select('id')
      .where('status', 'in', ['queued', 'scheduled', 'sending'])
      .where(handOffable({ now, republishBefore }))
      .where('handed_off_at', 'is not', null)
      .where(notSuspended)
      .limit(limit)
      .execute();
    const expired = await partitionQuery(db, selector)
      .select('id')
      .where('status', '=', 'sending')
      .where('lease_until', '<', now)
      .where('handed_off_at', 'is', null)
      .where(notSuspended)
      .limit(limit)
      .execute();
    ids.push(...stale.map((row) => row.id), ...expired.map((row) => row.id));
  }
  for (const lane of [0, 1]) {
    const laneDue: { id: string; due_at: number }[] = [];
    for (const status of PENDING_STATUSES) {
      if (ids.length + laneDue.length >= limit) break;
      const rows = await partitionQuery(db, selector)
        .select(['id', 'due_at'])
        .where('status', '=', status)
        .where('priority', '=', lane)
        .where('due_at', '<=', now)
        .where('handed_off_at', 'is', null)
        .where(notSuspended)
        .orderBy('due_at')
        .limit(limit - ids.length - laneDue.length)
        .execute();
      laneDue.push(...rows.map((row) => ({ id: row.id, due_at: Number(row.due_at) })));
    }
    laneDue.sort((x, y) => x.due_at - y.due_at || (x.id < y.id ? -1 : 1));
    ids.push(...laneDue.map((row) => row.id));
    if (ids.length >= limit) break;
  }
  return [...new Set(ids)].slice(0, limit);
}

/**
 * One keyset page (by id) of what the partition's due index holds in broker mode: pending rows
 * not handed off (scored by due time), pending rows handed off before `republishBefore` and due
 * by `now` (the sweep), and `sending` rows not handed off since then (scored by their lease end:
 * taken when it has passed, their worker dead).
 */
export async function listHandOffIds(
  db: Kysely<Tables>,
  selector: PartitionSelector & { now: number; republishBefore: number; afterId?: string; limit: number },
): Promise<DueIndexEntry[]> {
  const { now, republishBefore } = selector;
  let query = partitionQuery(db, selector)
    .select(['id', 'tenant_id', 'status', 'due_at', 'lease_until', 'priority'])
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', PENDING_STATUSES), eb('handed_off_at', 'is', null)]),
        eb.and([eb('status', 'in', PENDING_STATUSES), eb('handed_off_at', '<', republishBefore), eb('due_at', '<=', now)]),
        eb.and([eb('status', '=', 'sending'), eb.or([eb('handed_off_at', 'is', null), eb('handed_off_at', '<', republishBefore)])]),
      ]),
    )
    .where(notSuspended)
    .orderBy('id')
    .limit(selector.limit);
  if (selector.afterId !== undefined) query = query.where('id', '>', selector.afterId);
  return indexEntries(await query.execute());
}

/**
 * Per tenant, the partition's messages handed off since `republishBefore` and not finished
 * (queued, scheduled or sending). Those handed off before it are the sweep's: their jobs are
 * taken for lost, and they are handed off again.
 */
export async function outstandingHandOffs(
  db: Kysely<Tables>,
  selector: PartitionSelector & { republishBefore: number },
): Promise<Map<string, number>> {
  const rows = await partitionQuery(db, selector)
    .select((eb) => ['tenant_id', eb.fn.countAll<number>().as('outstanding')])
    .where('status', 'in', [...PENDING_STATUSES, 'sending'])
    .where('handed_off_at', '>=', selector.republishBefore)
    .groupBy('tenant_id')
    .execute();
  return new Map(rows.map((row) => [row.tenant_id, Number(row.outstanding)]));
}

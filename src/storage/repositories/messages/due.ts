/**
 * Reads of what is due in one partition: the candidates of an embedded-mode claim, the next due
 * time, and the listing a Redis due index is rebuilt from. Every one skips suspended tenants
 * ({@link notSuspended}). Pending messages are read one status at a time, each a range scan of
 * the `(channel, status, due_at)` index merged here: a single `status IN (...) ORDER BY due_at`
 * sorts every due row of the backlog.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../../schema.js';
import { byDueThenId, notSuspended, partitionQuery } from './conditions.js';
import { type PartitionSelector, PENDING_STATUSES } from './types.js';

/**
 * Up to `limit` ids a claim at `now` may take, `sending` rows whose lease expired first (unless
 * `expiredLeases` is false), then pending transactional ones, then pending bulk ones, each by due
 * time and id. Suspended tenants are left out
 * here as well as in the claim, or their backlog would fill every batch of candidates and starve
 * the other tenants.
 */
export async function dueCandidates(
  db: Kysely<Tables>,
  selector: PartitionSelector & { now: number; limit: number; expiredLeases?: boolean },
): Promise<string[]> {
  const { now, limit } = selector;
  const expired =
    selector.expiredLeases === false
      ? []
      : await partitionQuery(db, selector)
          .select('id')
          .where('status', '=', 'sending')
          .where('lease_until', '<', now)
          .where(notSuspended)
          .orderBy('lease_until')
          .limit(limit)
          .execute();
  // Lane by lane (transactional, then bulk), each a range scan of `(channel, status, priority,
  // due_at)`: a bulk backlog fills only what transactional messages leave of the batch.
  const due: { id: string; due_at: number }[] = [];
  for (const lane of [0, 1]) {
    const laneDue: { id: string; due_at: number }[] = [];
    for (const status of PENDING_STATUSES) {
      if (due.length >= limit) break;
      const rows = await partitionQuery(db, selector)
        .select(['id', 'due_at'])
        .where('status', '=', status)
        .where('priority', '=', lane)
        .where('due_at', '<=', now)
        .where(notSuspended)
        .orderBy('due_at')
        .limit(limit - due.length)
        .execute();
      laneDue.push(...rows.map((row) => ({ id: row.id, due_at: Number(row.due_at) })));
    }
    laneDue.sort(byDueThenId);
    due.push(...laneDue);
    if (due.length >= limit) break;
  }
  return [...new Set([...expired, ...due].map((r) => r.id))].slice(0, limit);
}

/**
 * The earliest due time of a pending message of the partition at or before `until`, with
 * `notHandedOff` only of those not handed to the broker: one index probe per status.
 */
export async function nextDueAt(
  db: Kysely<Tables>,
  selector: PartitionSelector & { until: number; notHandedOff?: boolean },
): Promise<number | undefined> {
  let earliest: number | undefined;
  for (const status of PENDING_STATUSES) {
    const row = await partitionQuery(db, selector)
      .select('due_at')
      .where('status', '=', status)
      .where('due_at', '<=', selector.until)
      .$if(selector.notHandedOff === true, (query) => query.where('handed_off_at', 'is', null))
      .where(notSuspended)
      .orderBy('due_at')
      .limit(1)
      .executeTakeFirst();
    if (row && (earliest === undefined || Number(row.due_at) < earliest)) earliest = Number(row.due_at);
  }
  return earliest;
}

/**
 * One keyset page (by id, after `afterId`) of the partition's claimable-by-`untilMs` ids: pending
 * ones scored by `dueAt`, `sending` ones by `leaseUntil` (claimable again when it passes); bulk
 * ones say so (`priority`), for the due index's bulk lane.
 */
export async function listDueIds(
  db: Kysely<Tables>,
  selector: PartitionSelector & { untilMs: number; afterId?: string; limit: number },
): Promise<{ id: string; dueAt: number; priority?: 'bulk' }[]> {
  let query = partitionQuery(db, selector)
    .select(['id', 'status', 'due_at', 'lease_until', 'priority'])
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', PENDING_STATUSES), eb('due_at', '<=', selector.untilMs)]),
        eb.and([eb('status', '=', 'sending'), eb('lease_until', '<=', selector.untilMs)]),
      ]),
    )
    .where(notSuspended)
    .orderBy('id')
    .limit(selector.limit);
  if (selector.afterId !== undefined) query = query.where('id', '>', selector.afterId);
  return indexEntries(await query.execute());
}

/**
 * Rows as due index entries: a pending row scored by its due time, a `sending` one by its lease
 * end (claimable again when it passes); bulk ones say so.
 */
export function indexEntries(
  rows: readonly { id: string; status: string; due_at: number; lease_until: number | null; priority: number }[],
): { id: string; dueAt: number; priority?: 'bulk' }[] {
  return rows.map((row) => ({
    id: row.id,
    dueAt: Number(row.status === 'sending' ? row.lease_until : row.due_at),
    ...(Number(row.priority) === 1 ? { priority: 'bulk' as const } : {}),
  }));
}

/**
 * Reads of what is due in one partition: the candidates of an embedded-mode claim, the next due
 * time, and the listing a Redis due index is rebuilt from. Every one skips suspended tenants
 * ({@link notSuspended}). Pending messages are read one status at a time, each a range scan of
 * the `(channel, status, due_at)` index merged here: a single `status IN (...) ORDER BY due_at`
 * sorts every due row of the backlog.
 */
import type { Kysely } from 'kysely';
import { allocate, type Lane, type SlotState, type TenantDemand } from '../../../core/fair-share.js';
import type { Tables } from '../../schema.js';
import { byDueThenId, notSuspended, partitionQuery } from './conditions.js';
import { type PartitionSelector, PENDING_STATUSES } from './types.js';

/** A row as a due index entry: pending ones scored by their due time, `sending` ones by their lease end. */
export interface DueIndexEntry {
  id: string;
  tenantId: string;
  dueAt: number;
  priority?: 'bulk';
}

/**
 * Up to `limit` ids a claim at `now` may take: `sending` rows whose lease expired first (unless
 * `expiredLeases` is false), then pending ones shared among the tenants by {@link allocate}
 * (each tenant's share of `slots`, transactional before bulk, weighted round-robin: never first
 * in, first out across tenants). Without `slots`, the `limit` slots are shared among the tenants
 * with due messages alone. Suspended tenants are left out here as well as in the claim, or their
 * backlog would fill every batch of candidates and starve the other tenants.
 */
export async function dueCandidates(
  db: Kysely<Tables>,
  selector: PartitionSelector & { now: number; limit: number; expiredLeases?: boolean; slots?: SlotState },
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
  const slots = selector.slots ?? { concurrency: limit, inFlight: new Map(), weights: new Map() };
  const ids = expired.map((row) => row.id);
  for (const take of allocate(await dueDemand(db, selector), slots)) {
    if (ids.length >= limit) break;
    ids.push(...(await dueIdsOf(db, { ...selector, ...take, limit: Math.min(take.count, limit - ids.length) })));
  }
  return [...new Set(ids)].slice(0, limit);
}

/**
 * How many pending messages each tenant has due at `now`, per lane: one grouped range scan of
 * `(channel, status, priority, tenant_id, due_at)` per status and lane.
 */
export async function dueDemand(db: Kysely<Tables>, selector: PartitionSelector & { now: number }): Promise<TenantDemand[]> {
  const demand = new Map<string, TenantDemand>();
  for (const lane of [0, 1] as const) {
    for (const status of PENDING_STATUSES) {
      const rows = await partitionQuery(db, selector)
        .select((eb) => ['tenant_id', eb.fn.countAll<number>().as('due')])
        .where('status', '=', status)
        .where('priority', '=', lane)
        .where('due_at', '<=', selector.now)
        .where(notSuspended)
        .groupBy('tenant_id')
        .execute();
      for (const row of rows) {
        const key = `${lane}:${row.tenant_id}`;
        const entry = demand.get(key) ?? { tenantId: row.tenant_id, lane, available: 0 };
        entry.available += Number(row.due);
        demand.set(key, entry);
      }
    }
  }
  return [...demand.values()];
}

/** Up to `limit` ids of one tenant's lane due at `now`, earliest first (by due time, then id). */
async function dueIdsOf(
  db: Kysely<Tables>,
  selector: PartitionSelector & { now: number; tenantId: string; lane: Lane; limit: number },
): Promise<string[]> {
  const due: { id: string; due_at: number }[] = [];
  for (const status of PENDING_STATUSES) {
    const rows = await partitionQuery(db, selector)
      .select(['id', 'due_at'])
      .where('status', '=', status)
      .where('priority', '=', selector.lane)
      .where('tenant_id', '=', selector.tenantId)
      .where('due_at', '<=', selector.now)
      .orderBy('due_at')
      .limit(selector.limit)
      .execute();
    due.push(...rows.map((row) => ({ id: row.id, due_at: Number(row.due_at) })));
  }
  return due
    .sort(byDueThenId)
    .slice(0, selector.limit)
    .map((row) => row.id);
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
): Promise<DueIndexEntry[]> {
  let query = partitionQuery(db, selector)
    .select(['id', 'tenant_id', 'status', 'due_at', 'lease_until', 'priority'])
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
  rows: readonly { id: string; tenant_id: string; status: string; due_at: number; lease_until: number | null; priority: number }[],
): DueIndexEntry[] {
  return rows.map((row) => ({
    id: row.id,
    tenantId: row.tenant_id,
    dueAt: Number(row.status === 'sending' ? row.lease_until : row.due_at),
    ...(Number(row.priority) === 1 ? { priority: 'bulk' as const } : {}),
  }));
}

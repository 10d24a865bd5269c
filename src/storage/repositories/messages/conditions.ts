/**
 * The conditions the claims, settles and due queries share. Each is part of the statement that
 * moves or reads the rows, so it holds on every dialect whichever instance runs it.
 */
import { type Kysely, sql } from 'kysely';
import type { Tables } from '../../schema.js';
import { type HeldClaim, type PartitionSelector, PENDING_STATUSES } from './types.js';

/**
 * Rows whose tenant is not suspended. One uncorrelated subquery per statement (the tenants table
 * is small, read once per statement: not a lookup per message); `tenant_id` and `tenants.id`
 * are never NULL, so NOT IN means what it says.
 */
export const notSuspended = sql<boolean>`tenant_id NOT IN (SELECT id FROM tenants WHERE status = ${'suspended'})`;

/**
 * Rows a claim at `now` may take: pending and due, or `sending` with an expired lease. One CASE,
 * not an OR of two ANDs: a CASE cannot use an index, so every dialect looks the ids up by primary
 * key (given the OR, SQLite scanned the status index over the whole due backlog: 1.1 ms against
 * 0.16 ms for 16 ids among 10,000 queued).
 */
export const claimable = (now: number) =>
  sql<boolean>`CASE WHEN status IN (${sql.join(PENDING_STATUSES)}) THEN due_at <= ${now} WHEN status = ${'sending'} THEN lease_until < ${now} ELSE FALSE END`;

/**
 * Rows among `claims` (distinct ids) still `sending` under their own claim's fencing token. Each
 * branch compares (`WHEN id THEN attempts = token`) so PostgreSQL types the token from
 * `attempts`; the status test sits in a CASE, as in {@link claimable}, so the ids are looked up by
 * primary key.
 */
export function heldClaims(claims: readonly HeldClaim[]) {
  const tokens = sql.join(
    claims.map(({ id, attempt }) => sql`WHEN ${id} THEN attempts = ${attempt}`),
    sql` `,
  );
  const ids = sql.join(claims.map(({ id }) => id));
  return sql<boolean>`id IN (${ids}) AND CASE WHEN status = 'sending' THEN CASE id ${tokens} ELSE FALSE END ELSE FALSE END`;
}

/** @throws RangeError unless 1 ≤ partitions ≤ 1024 and 0 ≤ partition < partitions. */
export function checkPartition({ partition, partitions }: PartitionSelector): void {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 1024)
    throw new RangeError(`partitions must be 1..1024, got ${partitions}`);
  if (!Number.isInteger(partition) || partition < 0 || partition >= partitions)
    throw new RangeError(`partition must be 0..${partitions - 1}, got ${partition}`);
}

/** The messages of one partition: its channel, and `shard % partitions = partition` when split. */
export function partitionQuery(db: Kysely<Tables>, selector: PartitionSelector) {
  let query = db.selectFrom('messages').where('channel', '=', selector.channel);
  if (selector.partitions > 1) query = query.where(sql<number>`shard % ${selector.partitions}`, '=', selector.partition);
  return query;
}

/** Claim order: due time, then id (ids are time-sortable). */
export const byDueThenId = (x: { due_at: number; id: string }, y: { due_at: number; id: string }) =>
  x.due_at - y.due_at || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);

/** Transactional (lane 0) before bulk, then by due time and id: the order a claim hands messages out in. */
export const byLaneThenDue = (x: { priority: number; due_at: number; id: string }, y: { priority: number; due_at: number; id: string }) =>
  Number(x.priority) - Number(y.priority) || byDueThenId(x, y);

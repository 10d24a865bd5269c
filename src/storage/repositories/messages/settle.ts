/**
 * Settles: the guarded moves out of `sending` (sent, retry, release, failed), one or many. A row
 * moves only while it is `sending` under the settle's fencing token, so a worker whose claim
 * expired and was taken again cannot overwrite the newer claim's outcome.
 */
import { type Kysely, sql } from 'kysely';
import type { MessageStatus, Tables } from '../../schema.js';
import { heldClaims } from './conditions.js';
import type { SettleOptions } from './types.js';

/** The columns a settle may change besides the lease. */
export interface SettleChanges {
  status: MessageStatus;
  sent_at?: number;
  due_at?: number;
  last_error?: string;
  provider_id?: string;
  provider_message_id?: string | null;
  attempts?: number;
  /** Broker mode: a retry the broker keeps is marked handed off (now); one that goes back through the due index is not (null). */
  handed_off_at?: number | null;
}

/** One settle: which message, under which claim, to what. */
export interface Settle {
  id: string;
  options: SettleOptions;
  changes: SettleChanges;
}

/** The columns a settle may set, besides `updated_at` (every settle) and the cleared lease. */
const SETTLE_COLUMNS = [
  'status',
  'sent_at',
  'due_at',
  'last_error',
  'provider_id',
  'provider_message_id',
  'attempts',
  'handed_off_at',
] as const;

/** One settle's guarded UPDATE. @returns whether the row moved. */
export async function moveFromSending(db: Kysely<Tables>, { id, options, changes }: Settle): Promise<boolean> {
  const result = await db
    .updateTable('messages')
    .set({ ...changes, lease_until: null, claim_token: null, updated_at: options.now })
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .where('attempts', '=', options.attempt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Many settles (distinct ids) in ONE guarded UPDATE, each row taking its own values
 * (`CASE id WHEN … THEN … ELSE column END`); `RETURNING id` tells each whether it moved, so this
 * needs the `returning` capability. One statement per batch: a statement per outcome was the
 * writer's largest cost at thousands of sends per second.
 * @returns per settle, in order, whether its row moved.
 */
export async function moveManyFromSending(trx: Kysely<Tables>, settles: readonly Settle[]): Promise<boolean[]> {
  const caseOf = (column: string, values: readonly { id: string; value: unknown }[]) =>
    sql`${sql.ref(column)} = CASE id ${sql.join(
      values.map(({ id, value }) => sql`WHEN ${id} THEN ${value}`),
      sql` `,
    )} ELSE ${sql.ref(column)} END`;
  const assignments = [
    sql`lease_until = NULL`,
    sql`claim_token = NULL`,
    caseOf(
      'updated_at',
      settles.map((settle) => ({ id: settle.id, value: settle.options.now })),
    ),
  ];
  for (const column of SETTLE_COLUMNS) {
    const values = settles.flatMap((settle) =>
      settle.changes[column] === undefined ? [] : [{ id: settle.id, value: settle.changes[column] }],
    );
    if (values.length > 0) assignments.push(caseOf(column, values));
  }
  const held = heldClaims(settles.map((settle) => ({ id: settle.id, attempt: settle.options.attempt })));
  const result = await sql<{ id: string }>`UPDATE messages SET ${sql.join(assignments)} WHERE ${held} RETURNING id`.execute(trx);
  const moved = new Set(result.rows.map((row) => row.id));
  return settles.map((settle) => moved.has(settle.id));
}

/**
 * Claims: moving claimable messages to `sending` under a lease, and extending the leases of
 * claims still being sent. A claim sets `lease_until = now + leaseMs` and increments `attempts`;
 * the new `attempts` is the claim's fencing token. A re-claim past `max_attempts` fails the
 * message instead of returning it.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../../database.js';
import type { MessageRow, Tables } from '../../schema.js';
import { byLaneThenDue, claimable, heldClaims, notSuspended } from './conditions.js';
import { type EventOutbox, WEBHOOKS_ONLY, writeSettleEvents } from './events.js';
import { moveFromSending } from './settle.js';
import { type ClaimOptions, type HeldClaim, type Message, toMessage } from './types.js';

/** Ids per claim statement: keeps `IN (...)` lists well inside every dialect's parameter limit. */
export const CLAIM_CHUNK = 500;

const EXHAUSTED_LEASE_ERROR = 'lease expired after the last attempt; outcome unknown';

/**
 * Claims those of `ids` (distinct, at most {@link CLAIM_CHUNK}) that are claimable at `now`, in
 * the transaction `trx`: one guarded UPDATE stamping a random claim token, its rows returned with
 * it or, without the `returning` capability, read back by that token, so two concurrent claims
 * never return the same message.
 * @returns the messages this call moved, transactional first, then by due time and id; each one's `attempts` is its token.
 */
export async function claimIds(
  trx: Kysely<Tables>,
  capabilities: DialectCapabilities,
  ids: readonly string[],
  options: ClaimOptions,
  outbox: EventOutbox = WEBHOOKS_ONLY,
): Promise<Message[]> {
  if (ids.length === 0) return [];
  const { now, leaseMs } = options;
  const token = randomBytes(12).toString('base64url');
  const update = trx
    .updateTable('messages')
    .set((eb) => ({
      status: 'sending',
      lease_until: now + leaseMs,
      attempts: eb('attempts', '+', 1),
      claim_token: token,
      updated_at: now,
      ...(options.providerId == null ? {} : { provider_id: options.providerId }),
    }))
    .where('id', 'in', ids)
    .where(claimable(now))
    .where(notSuspended);
  let rows: MessageRow[];
  if (capabilities.returning) rows = await update.returningAll().execute();
  else {
    const moved = await update.executeTakeFirst();
    if (moved.numUpdatedRows === 0n) return [];
    rows = await trx.selectFrom('messages').selectAll().where('id', 'in', ids).where('claim_token', '=', token).execute();
  }
  rows.sort(byLaneThenDue);
  const claimed: Message[] = [];
  const failed: { id: string; status: 'failed'; at: number }[] = [];
  for (const message of rows.map((row) => toMessage(row))) {
    if (message.attempts <= message.maxAttempts) claimed.push(message);
    else if (
      await moveFromSending(trx, {
        id: message.id,
        options: { attempt: message.attempts, now },
        changes: { status: 'failed', last_error: EXHAUSTED_LEASE_ERROR },
      })
    )
      failed.push({ id: message.id, status: 'failed', at: now });
  }
  await writeSettleEvents(trx, failed, outbox);
  return claimed;
}

/**
 * Sets the leases of `claims` (distinct ids, at most {@link CLAIM_CHUNK}) that still hold their
 * fencing token to `now + leaseMs`. Sets rather than adds, so running it twice is harmless.
 * @returns how many leases moved.
 */
export async function extendLeases(
  trx: Kysely<Tables>,
  claims: readonly HeldClaim[],
  options: { now: number; leaseMs: number },
): Promise<number> {
  const result = await trx
    .updateTable('messages')
    .set({ lease_until: options.now + options.leaseMs, updated_at: options.now })
    .where(heldClaims(claims))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Vendors' delivery receipts: `sent → delivered | undelivered`, matched by the provider and the
 * vendor's message id (`BizId`, `SerialNo`: the `provider_message_id` the send stored). A receipt
 * moves only a `sent` message of that provider, so a receipt can never touch a message another
 * provider sent (nor, through it, another tenant's); a duplicate finds the message moved already.
 * A receipt for an id not yet stored (the vendor answered faster than our settle committed) waits
 * in `pending_receipts` and is applied in the settle's own transaction (`applyPendingReceipts`).
 * Each move writes its event rows in its transaction (`messages/events.ts`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Receipt } from '../../providers/receipt.js';
import type { Database } from '../database.js';
import { sha256Hex } from '../ids.js';
import type { Tables } from '../schema.js';
import { type EventOutbox, WEBHOOKS_ONLY, writeSettleEvents } from './messages/events.js';

/** What became of one receipt. */
export type ReceiptOutcome = 'applied' | 'pending' | 'duplicate';

const PENDING_CHUNK = 200;

/**
 * Receipts of one push applied per transaction (up to four statements each). The push as a whole
 * is bounded by the request body limit (`SLUICE_BODY_LIMIT_BYTES`), not by a count of entries.
 * Measured (SQLite FULL, a busy 2-core VM, 1 MiB push of 31,000 short Aliyun reports): chunks of
 * 500 took 3.5 s in all with the longest event-loop stall 0.1–0.4 s; of 200, 6 s and 0.25 s (a
 * commit per chunk); one transaction of 10,000 stalled the loop 1.4 s.
 */
export const RECEIPT_CHUNK = 500;

/** Moves the `sent` message of `providerId` named by `receipt`; @returns whether it moved. */
async function moveBySentReceipt(trx: Kysely<Tables>, providerId: string, receipt: Receipt, now: number): Promise<string | undefined> {
  const row = await trx
    .selectFrom('messages')
    .select(['id', 'status'])
    .where('provider_message_id', '=', receipt.providerMessageId)
    .where('provider_id', '=', providerId)
    .executeTakeFirst();
  if (row === undefined || row.status !== 'sent') return undefined;
  const result = await trx
    .updateTable('messages')
    .set({
      status: receipt.delivered ? 'delivered' : 'undelivered',
      receipt_status: receipt.delivered ? 'delivered' : 'undelivered',
      receipt_code: receipt.code.slice(0, 512),
      receipt_at: receipt.at,
      updated_at: now,
    })
    .where('id', '=', row.id)
    .where('status', '=', 'sent')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n ? row.id : undefined;
}

/**
 * In a settle's transaction: the pending receipts of the messages `sent` just now (`moved`, with
 * the provider and vendor id they were sent with), applied and deleted, with their events.
 */
export async function applyPendingReceipts(
  trx: Kysely<Tables>,
  moved: readonly { providerId: string; providerMessageId: string }[],
  now: number,
  outbox: EventOutbox = WEBHOOKS_ONLY,
): Promise<void> {
  for (let start = 0; start < moved.length; start += PENDING_CHUNK) {
    const chunk = moved.slice(start, start + PENDING_CHUNK);
    const rows = await trx
      .selectFrom('pending_receipts')
      .selectAll()
      .where(
        'provider_message_id',
        'in',
        chunk.map((move) => move.providerMessageId),
      )
      .execute();
    const wanted = new Set(chunk.map((move) => `${move.providerId}\u0000${move.providerMessageId}`));
    const events: { id: string; status: 'delivered' | 'undelivered'; at: number }[] = [];
    for (const row of rows) {
      if (!wanted.has(`${row.provider_id}\u0000${row.provider_message_id}`)) continue;
      const receipt = {
        providerMessageId: row.provider_message_id,
        delivered: Number(row.delivered) === 1,
        code: row.code,
        at: Number(row.at),
      };
      const id = await moveBySentReceipt(trx, row.provider_id, receipt, now);
      if (id !== undefined) events.push({ id, status: receipt.delivered ? 'delivered' : 'undelivered', at: now });
      await trx
        .deleteFrom('pending_receipts')
        .where('provider_id', '=', row.provider_id)
        .where('provider_message_id', '=', row.provider_message_id)
        .execute();
    }
    await writeSettleEvents(trx, events, outbox);
  }
}

export class ReceiptsRepository {
  /** `outbox`: where the status events of the moves go (the bus too, with the broker on). */
  constructor(
    private readonly database: Database,
    private readonly outbox: EventOutbox = WEBHOOKS_ONLY,
  ) {}

  private get db() {
    return this.database.db;
  }

  /** A new receipt token for the provider (the previous one stops working). @returns it in clear, this once. */
  async issueToken(providerId: string, now: number): Promise<string> {
    const token = `rct_${randomBytes(32).toString('base64url')}`;
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('receipt_tokens').where('provider_id', '=', providerId).execute();
      await trx
        .insertInto('receipt_tokens')
        .values({ provider_id: providerId, token_hash: sha256Hex(token), created_at: now })
        .execute();
    });
    return token;
  }

  /** Whether `token` is the provider's receipt token (compared in constant time). */
  async checkToken(providerId: string, token: string): Promise<boolean> {
    const row = await this.db.selectFrom('receipt_tokens').select('token_hash').where('provider_id', '=', providerId).executeTakeFirst();
    if (!row) return false;
    const given = Buffer.from(sha256Hex(token), 'hex');
    const stored = Buffer.from(row.token_hash, 'hex');
    return given.length === stored.length && timingSafeEqual(given, stored);
  }

  /**
   * Applies a vendor's push, every receipt of it, in transactions of at most {@link RECEIPT_CHUNK}
   * receipts: a large push never holds the database's write lock (SQLite's only one) for long, and
   * other writers run between its chunks. Should a chunk fail, the chunks before it stay applied
   * and the vendor's retry finds them `duplicate`. @returns each receipt's outcome, in order.
   */
  async apply(providerId: string, receipts: readonly Receipt[], now: number): Promise<ReceiptOutcome[]> {
    const outcomes: ReceiptOutcome[] = [];
    for (let start = 0; start < receipts.length; start += RECEIPT_CHUNK) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      outcomes.push(...(await this.applyChunk(providerId, receipts.slice(start, start + RECEIPT_CHUNK), now)));
    }
    return outcomes;
  }

  private async applyChunk(providerId: string, receipts: readonly Receipt[], now: number): Promise<ReceiptOutcome[]> {
    return this.db.transaction().execute(async (trx) => {
      const outcomes: ReceiptOutcome[] = [];
      const events: { id: string; status: 'delivered' | 'undelivered'; at: number }[] = [];
      for (const receipt of receipts) {
        const id = await moveBySentReceipt(trx, providerId, receipt, now);
        if (id !== undefined) {
          events.push({ id, status: receipt.delivered ? 'delivered' : 'undelivered', at: now });
          outcomes.push('applied');
          continue;
        }
        const known = await trx
          .selectFrom('messages')
          .select('status')
          .where('provider_message_id', '=', receipt.providerMessageId)
          .where('provider_id', '=', providerId)
          .executeTakeFirst();
        if (known && (known.status === 'delivered' || known.status === 'undelivered')) {
          outcomes.push('duplicate');
          continue;
        }
        const waiting = await trx
          .selectFrom('pending_receipts')
          .select('at')
          .where('provider_message_id', '=', receipt.providerMessageId)
          .where('provider_id', '=', providerId)
          .executeTakeFirst();
        if (waiting) {
          outcomes.push('duplicate');
          continue;
        }
        await trx
          .insertInto('pending_receipts')
          .values({
            provider_id: providerId,
            provider_message_id: receipt.providerMessageId.slice(0, 512),
            delivered: receipt.delivered ? 1 : 0,
            code: receipt.code.slice(0, 512),
            at: receipt.at,
            received_at: now,
          })
          .execute();
        outcomes.push('pending');
      }
      await writeSettleEvents(trx, events, this.outbox);
      return outcomes;
    });
  }

  /**
   * Deletes up to `limit` receipts that waited since before `before` for a send that never settled
   * with their id (the retention purger's batch). @returns how many.
   */
  async purgeFinished(options: { before: number; limit: number }): Promise<number> {
    const keys = await this.db
      .selectFrom('pending_receipts')
      .select(['provider_id', 'provider_message_id'])
      .where('received_at', '<', options.before)
      .limit(options.limit)
      .execute();
    if (keys.length === 0) return 0;
    // One statement a batch: the keys found, still past the cut-off (a settle may have taken one).
    const result = await this.db
      .deleteFrom('pending_receipts')
      .where((eb) =>
        eb.or(
          keys.map((key) => eb.and([eb('provider_id', '=', key.provider_id), eb('provider_message_id', '=', key.provider_message_id)])),
        ),
      )
      .where('received_at', '<', options.before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

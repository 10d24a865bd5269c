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
import { type Insertable, type Kysely, sql } from 'kysely';
import type { Receipt } from '../../providers/receipt.js';
import type { Database, DialectCapabilities } from '../database.js';
import { sha256Hex } from '../ids.js';
import type { PendingReceiptsTable, Tables } from '../schema.js';
import { type EventOutbox, WEBHOOKS_ONLY, writeSettleEvents } from './messages/events.js';

/** What became of one receipt. */
export type ReceiptOutcome = 'applied' | 'pending' | 'duplicate';

const PENDING_CHUNK = 200;

/** Longest vendor id a waiting receipt keeps (the column's width); longer ones are cut, and looked up cut. */
const ID_WIDTH = 512;

/**
 * Receipts of one push applied per transaction, in a few statements whatever the outcomes: a read
 * of their messages, one `UPDATE` of those that move, a read of the waiting receipts, one
 * multi-row `INSERT` of the new ones, their events. The push as a whole is bounded by the request
 * body limit (`SLUICE_BODY_LIMIT_BYTES`), not by a count of entries (its cost: docs/benchmarks.md,
 * "Delivery receipts"). Chunks keep SQLite's stalls of the event loop short, and other writers run
 * between them.
 */
export const RECEIPT_CHUNK = 500;

type Verdict = 'delivered' | 'undelivered';
const verdictOf = (receipt: Receipt): Verdict => (receipt.delivered ? 'delivered' : 'undelivered');

/** What a list of receipts did to the `sent` messages of one provider. */
interface Moves {
  /** Per receipt, in order: the id of the message it moved, if it moved one. */
  readonly moved: readonly (string | undefined)[];
  /** Per vendor id that names a message: that message's status after the moves. */
  readonly statusOf: ReadonlyMap<string, string>;
}

/**
 * Sets each message of `moves` its receipt's verdict, code and time, in one statement: `UPDATE …
 * FROM` a list of values, or (MySQL) a join with it; the ids again as a list, for the primary key
 * (PostgreSQL without statistics hashed the whole table). A `CASE` on the id per column did the same
 * portably, but compares every row with every id: at 500 a chunk it was 80 % of a push of matched
 * receipts (2.4 s of 3.0 s on a loaded PostgreSQL). @returns how many rows moved.
 */
async function setVerdicts(
  trx: Kysely<Tables>,
  capabilities: DialectCapabilities,
  moves: readonly { id: string; receipt: Receipt }[],
  now: number,
): Promise<number> {
  const ids = sql.join(moves.map((move) => move.id));
  const values = moves.map(({ id, receipt }) => ({
    id,
    verdict: verdictOf(receipt),
    code: receipt.code.slice(0, ID_WIDTH),
    at: receipt.at,
  }));
  const query = capabilities.updateFrom
    ? sql`with v (id, verdict, code, at) as (values ${sql.join(
        values.map((v) => sql`(${v.id}, ${v.verdict}, ${v.code}, cast(${v.at} as bigint))`),
      )})
      update messages set status = v.verdict, receipt_status = v.verdict, receipt_code = v.code, receipt_at = v.at, updated_at = ${now}
      from v where messages.id = v.id and messages.id in (${ids}) and messages.status = 'sent'`
    : sql`update messages join (${sql.join(
        values.map((v, i) =>
          i === 0
            ? sql`select ${v.id} as id, ${v.verdict} as verdict, ${v.code} as code, ${v.at} as at`
            : sql`select ${v.id}, ${v.verdict}, ${v.code}, ${v.at}`,
        ),
        sql` union all `,
      )}) v on messages.id = v.id
      set messages.status = v.verdict, messages.receipt_status = v.verdict, messages.receipt_code = v.code,
        messages.receipt_at = v.at, messages.updated_at = ${now}
      where messages.id in (${ids}) and messages.status = 'sent'`;
  const result = await query.execute(trx);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * Moves the `sent` messages of `providerId` the receipts name, in order, as if one by one: the
 * first receipt of a vendor id moves its message, a later one finds it moved. One read and one
 * `UPDATE` ({@link setVerdicts}) whatever the count. `lock`: the read takes the rows `FOR UPDATE`
 * where writers run side by side, so a concurrent push of the same receipts waits, then finds
 * them moved: no move is reported, nor its event written, twice.
 */
async function moveBySentReceipts(
  trx: Kysely<Tables>,
  providerId: string,
  receipts: readonly Receipt[],
  now: number,
  capabilities: DialectCapabilities,
  lock: boolean,
): Promise<Moves> {
  const ids = [...new Set(receipts.map((receipt) => receipt.providerMessageId))];
  const rows =
    ids.length === 0
      ? []
      : await trx
          .selectFrom('messages')
          .select(['id', 'status', 'provider_message_id'])
          .where('provider_id', '=', providerId)
          .where('provider_message_id', 'in', ids)
          .orderBy('id')
          .$if(lock && capabilities.concurrentWriters, (query) => query.forUpdate())
          .execute();
  // One message a vendor id, as a lookup of one row took it.
  const messageOf = new Map<string, { id: string; status: string }>();
  for (const row of rows)
    if (row.provider_message_id !== null && !messageOf.has(row.provider_message_id))
      messageOf.set(row.provider_message_id, { id: row.id, status: row.status });
  const moved: (string | undefined)[] = [];
  const moves: { id: string; receipt: Receipt }[] = [];
  for (const receipt of receipts) {
    const message = messageOf.get(receipt.providerMessageId);
    if (message?.status !== 'sent') {
      moved.push(undefined);
      continue;
    }
    message.status = verdictOf(receipt);
    moves.push({ id: message.id, receipt });
    moved.push(message.id);
  }
  if (moves.length > 0) {
    const moving = await setVerdicts(trx, capabilities, moves, now);
    // The rows are this transaction's (locked, or SQLite's one writer): each moves.
    if (moving !== moves.length) throw new Error(`receipts moved ${moving} of ${moves.length} sent messages read`);
  }
  return { moved, statusOf: new Map([...messageOf].map(([id, message]) => [id, message.status])) };
}

/**
 * In a settle's transaction: the pending receipts of the messages `sent` just now (`moved`, with
 * the provider and vendor id they were sent with), applied and deleted, with their events.
 */
export async function applyPendingReceipts(
  trx: Kysely<Tables>,
  capabilities: DialectCapabilities,
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
    const byProvider = new Map<string, Receipt[]>();
    for (const row of rows) {
      if (!wanted.has(`${row.provider_id}\u0000${row.provider_message_id}`)) continue;
      const receipts = byProvider.get(row.provider_id) ?? [];
      receipts.push({
        providerMessageId: row.provider_message_id,
        delivered: Number(row.delivered) === 1,
        code: row.code,
        at: Number(row.at),
      });
      byProvider.set(row.provider_id, receipts);
    }
    const events: { id: string; status: Verdict; at: number }[] = [];
    for (const [providerId, receipts] of byProvider) {
      // The settle's own UPDATE holds these messages already.
      const { moved: ids } = await moveBySentReceipts(trx, providerId, receipts, now, capabilities, false);
      for (const [i, id] of ids.entries()) if (id !== undefined) events.push({ id, status: verdictOf(receipts[i]!), at: now });
      await trx
        .deleteFrom('pending_receipts')
        .where('provider_id', '=', providerId)
        .where(
          'provider_message_id',
          'in',
          receipts.map((receipt) => receipt.providerMessageId),
        )
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
      const { moved, statusOf } = await moveBySentReceipts(trx, providerId, receipts, now, this.database.capabilities, true);
      const outcomes: (ReceiptOutcome | undefined)[] = moved.map((id) => (id === undefined ? undefined : 'applied'));
      // A receipt whose message has its verdict already is a duplicate; the rest wait, once each.
      const toWait: number[] = [];
      for (const [i, receipt] of receipts.entries()) {
        if (outcomes[i] !== undefined) continue;
        const status = statusOf.get(receipt.providerMessageId);
        if (status === 'delivered' || status === 'undelivered') outcomes[i] = 'duplicate';
        else toWait.push(i);
      }
      const keyOf = (i: number) => receipts[i]!.providerMessageId.slice(0, ID_WIDTH);
      const keys = [...new Set(toWait.map(keyOf))];
      const waiting = new Set(
        keys.length === 0
          ? []
          : (
              await trx
                .selectFrom('pending_receipts')
                .select('provider_message_id')
                .where('provider_id', '=', providerId)
                .where('provider_message_id', 'in', keys)
                .execute()
            ).map((row) => row.provider_message_id),
      );
      const rows: Insertable<PendingReceiptsTable>[] = [];
      for (const i of toWait) {
        const key = keyOf(i);
        if (waiting.has(key)) {
          outcomes[i] = 'duplicate';
          continue;
        }
        waiting.add(key);
        const receipt = receipts[i]!;
        rows.push({
          provider_id: providerId,
          provider_message_id: key,
          delivered: receipt.delivered ? 1 : 0,
          code: receipt.code.slice(0, ID_WIDTH),
          at: receipt.at,
          received_at: now,
        });
        outcomes[i] = 'pending';
      }
      if (rows.length > 0) await trx.insertInto('pending_receipts').values(rows).execute();
      const events = moved.flatMap((id, i) => (id === undefined ? [] : [{ id, status: verdictOf(receipts[i]!), at: now }]));
      await writeSettleEvents(trx, events, this.outbox);
      return outcomes as ReceiptOutcome[];
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

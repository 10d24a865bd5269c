/**
 * The messages repository's one writer: inserts (accepts), settles and claims that arrive in the
 * same event-loop turn share ONE transaction ({@link GroupCommitWriter}), so with SQLite
 * `synchronous=FULL` a busy moment costs one fsync, not one per message. Each caller still hears
 * its own answer (did ITS settle move, which messages did ITS claim take); a failing batch is
 * retried one item per transaction, so one bad item fails only its own caller.
 */
import type { Kysely } from 'kysely';
import type { Database, DialectCapabilities } from '../../database.js';
import { retryTransient } from '../../errors.js';
import { type GroupCommitOptions, type GroupCommitStats, GroupCommitWriter } from '../../group-commit.js';
import type { DeliveryAttemptsTable, MessageRow, Tables } from '../../schema.js';
import { applyPendingReceipts } from '../receipts.js';
import { type EventOutbox, type StatusChange, WEBHOOKS_ONLY, writeEvents, writeSettleEvents } from './events.js';
import { MessageInserts } from './insert.js';
import { moveFromSending, moveManyFromSending, type Settle } from './settle.js';
import { attemptRow, type Message } from './types.js';

/** A claim's statements, run inside the batch's transaction `trx`: resolves the messages it moved. */
export type ClaimWork = (trx: Kysely<Tables>) => Promise<Message[]>;

type WriteItem = { kind: 'insert'; row: MessageRow } | ({ kind: 'settle' } & Settle) | { kind: 'claim'; run: ClaimWork };

/** Per item: inserts `true`, settles whether they moved, claims the messages they moved. */
type WriteResult = boolean | Message[];

async function sequentially<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const item of items) results.push(await work(item));
  return results;
}

/**
 * Writes one batch in its transaction: every new row in one multi-row INSERT, then the settles'
 * guarded UPDATEs (in id order, so concurrent batches lock rows in the same order; one statement
 * for distinct ids where the dialect returns rows), then the attempt rows of the settles that
 * moved in one INSERT, then the outbox rows of the accepts and of the settles that finished a
 * message (`events.ts`), then the claims (a claim writes the events of the messages it fails). Answers per item, in item order.
 */
async function writeBatch(
  trx: Kysely<Tables>,
  capabilities: DialectCapabilities,
  inserts: MessageInserts,
  items: readonly WriteItem[],
  outbox: EventOutbox,
): Promise<WriteResult[]> {
  const rows: MessageRow[] = [];
  const settles: { index: number; item: Extract<WriteItem, { kind: 'settle' }> }[] = [];
  const claims: { index: number; item: Extract<WriteItem, { kind: 'claim' }> }[] = [];
  items.forEach((item, index) => {
    if (item.kind === 'insert') rows.push(item.row);
    else if (item.kind === 'settle') settles.push({ index, item });
    else claims.push({ index, item });
  });
  const results: WriteResult[] = items.map((item) => item.kind === 'insert');
  if (rows.length > 0) await inserts.insert(trx, rows);
  settles.sort((a, b) => (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : a.index - b.index));
  const distinct = new Set(settles.map(({ item }) => item.id)).size === settles.length;
  const moved =
    distinct && settles.length > 1 && capabilities.returning
      ? await moveManyFromSending(
          trx,
          settles.map(({ item }) => item),
        )
      : await sequentially(settles, ({ item }) => moveFromSending(trx, item));
  const attempts: DeliveryAttemptsTable[] = [];
  for (const [position, { index, item }] of settles.entries()) {
    results[index] = moved[position] as boolean;
    const record = item.options.record;
    if (moved[position] && record !== undefined) attempts.push(attemptRow(record, item.id));
  }
  if (attempts.length > 0) await trx.insertInto('delivery_attempts').values(attempts).execute();
  // The outbox rows of these changes, in their transaction: committed with them or not at all.
  if (rows.length > 0) await writeEvents(trx, rows.map(acceptedChange), outbox);
  await writeSettleEvents(
    trx,
    settles.flatMap(({ item }, position) => (moved[position] ? [{ id: item.id, status: item.changes.status, at: item.options.now }] : [])),
    outbox,
  );
  // Receipts that came before these sends were settled: applied now, after the `sent` events.
  const sent = settles.flatMap(({ item }, position) =>
    moved[position] && item.changes.status === 'sent' && item.changes.provider_id && item.changes.provider_message_id
      ? [{ providerId: item.changes.provider_id, providerMessageId: item.changes.provider_message_id }]
      : [],
  );
  if (sent.length > 0) await applyPendingReceipts(trx, capabilities, sent, settles[0]!.item.options.now, outbox);
  for (const { index, item } of claims) results[index] = await item.run(trx);
  return results;
}

function acceptedChange(row: MessageRow): StatusChange {
  return {
    type: 'message.accepted',
    messageId: row.id,
    tenantId: row.tenant_id,
    channel: row.channel,
    recipient: row.recipient,
    status: row.status,
    at: row.created_at,
  };
}

/** The group-committed writes of the messages repository, each typed by what it answers. */
export class GroupCommittedWrites {
  private readonly writer: GroupCommitWriter<WriteItem, WriteResult>;

  constructor(database: Database, options?: GroupCommitOptions, outbox: EventOutbox = WEBHOOKS_ONLY) {
    const inserts = new MessageInserts();
    this.writer = new GroupCommitWriter<WriteItem, WriteResult>(
      database,
      (trx, items) => writeBatch(trx, database.capabilities, inserts, items, outbox),
      options,
      // Only an accepted message must be on disk before its caller hears (the 202). A claim or an
      // outcome lost in an OS crash makes the message be sent again, as at-least-once allows; not
      // waiting for their fsync keeps the dispatcher from idling a sync per claim.
      (items) => items.every((item) => item.kind !== 'insert'),
    );
  }

  /** Counters of the group commit writer (items, transactions, fallbacks). */
  get stats(): Readonly<GroupCommitStats> {
    return this.writer.stats;
  }

  /** Resolves once the transaction holding `row` has committed (and is on disk). */
  async insert(row: MessageRow): Promise<void> {
    await this.writer.write({ kind: 'insert', row });
  }

  /** A guarded move out of `sending`. @returns whether it moved. */
  async settle(settle: Settle): Promise<boolean> {
    return (await this.writer.write({ kind: 'settle', ...settle })) as boolean;
  }

  /**
   * Runs a claim in the batch's transaction: a claim is a write too (an fsync in SQLite), so it
   * shares the commit with the inserts and settles of the moment. Re-submitted on a transient
   * conflict (deadlock, serialization failure, SQLite busy). `run` may run more than once.
   */
  claim(run: ClaimWork): Promise<Message[]> {
    return retryTransient(async () => (await this.writer.write({ kind: 'claim', run })) as Message[]);
  }

  /** Waits for every write already submitted. */
  drain(): Promise<void> {
    return this.writer.drain();
  }
}

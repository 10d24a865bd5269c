/**
 * Messages and their delivery attempts: the durable queue of DESIGN.md §6.
 *
 * Writes go through one {@link GroupCommitWriter}: inserts (accepts) and settles (the guarded
 * moves out of `sending` with their attempt rows) that arrive in the same event-loop turn share
 * ONE transaction, so with SQLite `synchronous=FULL` a busy moment costs one fsync, not one per
 * message. Each settle still answers whether ITS guarded update moved; a failing batch is retried
 * one item per transaction, so one bad item fails only its own caller.
 *
 * Status moves are guarded UPDATEs (`... WHERE id = ? AND status IN (...)`), each reporting
 * whether it moved, so a late or repeated worker cannot move a message backwards:
 *
 * ```
 * queued|scheduled ──claim──▶ sending ──markSent──▶ sent
 *      │   ▲                    │  ──markFailed─▶ failed
 *      │   └─────markRetry──────┘  (lease expired: claimable again)
 *      └──cancel──▶ canceled
 * ```
 *
 * A claim sets `lease_until = now + leaseMs` and increments `attempts`; the new `attempts` is the
 * claim's fencing token: `markSent/markRetry/markFailed/extendLeases` take it and move the row only
 * if it is still that claim (a worker whose lease expired and whose message was re-claimed by
 * another cannot overwrite the newer claim's outcome). A `sending` row whose lease expired is
 * claimable again (at-least-once delivery). A re-claim that would exceed `max_attempts` fails the
 * message instead ("lease expired after the last attempt") and is not returned.
 *
 * `now` is always the caller's clock (epoch ms), never the database's: tests drive time, and
 * every instance judges due times and leases the same way.
 *
 * A suspended tenant's messages keep their status and are never claimed (nor listed as due, nor
 * reported as next due) until it is active again: every claim and due query carries
 * {@link notSuspended}, so a suspension is enforced by the claim's own statement, on every dialect,
 * whichever instance suspended.
 */
import { randomBytes } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import type { Channel } from '../../core/channels.js';
import type { Database, DialectCapabilities } from '../database.js';
import { DuplicateIdempotencyKeyError, isUniqueViolation, retryTransient } from '../errors.js';
import { type GroupCommitOptions, type GroupCommitStats, GroupCommitWriter } from '../group-commit.js';
import { newId, newMessageId, shardOf } from '../ids.js';
import type { AttemptOutcome, DeliveryAttemptsTable, MessagePayload, MessageRow, MessageStatus } from '../schema.js';

export interface Message {
  id: string;
  tenantId: string;
  channel: Channel;
  recipient: string;
  payload: MessagePayload;
  status: MessageStatus;
  /** When it may be sent (epoch ms); after a retry, when the next attempt is due. */
  dueAt: number;
  /** Claims so far; while `sending`, the fencing token of the current claim. */
  attempts: number;
  maxAttempts: number;
  /** 0..1023; partition p of P owns `shard % P == p`. */
  shard: number;
  providerId: string | null;
  providerMessageId: string | null;
  lastError: string | null;
  /** While `sending`: when the claim expires. */
  leaseUntil: number | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  createdAt: number;
  updatedAt: number;
  sentAt: number | null;
}

export interface NewMessage {
  /** Default: a new `newMessageId(now)`. */
  id?: string;
  tenantId: string;
  channel: Channel;
  /** Normalised recipient. */
  recipient: string;
  payload: MessagePayload;
  /** Acceptance time (epoch ms). */
  now: number;
  /** When to send; default `now`. Later than `now` → status `scheduled`, else `queued`. */
  dueAt?: number;
  /** Claims allowed before the message fails; default 5. */
  maxAttempts?: number;
  idempotencyKey?: string | null;
  /** Hash of the request body, compared when the idempotency key is replayed. */
  requestHash?: string | null;
}

export interface DeliveryAttempt {
  id: string;
  messageId: string;
  attemptNo: number;
  providerId: string | null;
  startedAt: number;
  finishedAt: number;
  outcome: AttemptOutcome;
  error: string | null;
  providerMessageId: string | null;
}

export type NewDeliveryAttempt = Omit<DeliveryAttempt, 'id' | 'error' | 'providerMessageId' | 'providerId'> & {
  providerId?: string | null;
  error?: string | null;
  providerMessageId?: string | null;
};

/** A claim's parameters. */
export interface ClaimOptions {
  now: number;
  /** How long the claim holds before another worker may take the message. */
  leaseMs: number;
  /** Provider chosen already, if any (also settable by `markSent`). */
  providerId?: string | null;
}

/** Which slice of the queue a dispatcher serves: `channel`, and shards with `shard % partitions == partition`. */
export interface PartitionSelector {
  channel: Channel;
  /** 0 ≤ partition < partitions. */
  partition: number;
  /** 1..1024; 1 = the whole channel. */
  partitions: number;
}

/** Common fields of the guarded moves out of `sending`. */
export interface SettleOptions {
  /** The `attempts` value returned by the claim (fencing token). */
  attempt: number;
  now: number;
  /** Also insert this attempt row, in the same transaction, if (and only if) the move happens. */
  record?: Omit<NewDeliveryAttempt, 'messageId'>;
}

export type CancelResult = 'canceled' | 'not-found' | 'too-late';

/** One row of {@link MessagesRepository.countOpen}. */
export interface StatusCount {
  channel: Channel;
  status: MessageStatus;
  count: number;
}

const PENDING: MessageStatus[] = ['queued', 'scheduled'];
const OPEN_STATUSES: MessageStatus[] = ['queued', 'scheduled', 'sending'];
const FINISHED_STATUSES: MessageStatus[] = ['sent', 'failed', 'canceled'];
const EXHAUSTED_LEASE_ERROR = 'lease expired after the last attempt; outcome unknown';

/** `payload`: when the caller has it already (a row just inserted), so it is not parsed back. */
function toMessage(row: MessageRow, payload?: MessagePayload): Message {
  const nullableNumber = (value: number | null) => (value === null ? null : Number(value));
  return {
    id: row.id,
    tenantId: row.tenant_id,
    channel: row.channel,
    recipient: row.recipient,
    payload: payload ?? (JSON.parse(row.payload) as MessagePayload),
    status: row.status,
    dueAt: Number(row.due_at),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    shard: Number(row.shard),
    providerId: row.provider_id,
    providerMessageId: row.provider_message_id,
    lastError: row.last_error,
    leaseUntil: nullableNumber(row.lease_until),
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    sentAt: nullableNumber(row.sent_at),
  };
}

function toAttempt(row: DeliveryAttemptsTable): DeliveryAttempt {
  return {
    id: row.id,
    messageId: row.message_id,
    attemptNo: Number(row.attempt_no),
    providerId: row.provider_id,
    startedAt: Number(row.started_at),
    finishedAt: Number(row.finished_at),
    outcome: row.outcome,
    error: row.error,
    providerMessageId: row.provider_message_id,
  };
}

/** `messageId` apart from `input`, so a settle's record needs no `{ ...record, messageId }` copy per row. */
function attemptRow(input: Omit<NewDeliveryAttempt, 'messageId'>, messageId: string): DeliveryAttemptsTable {
  return {
    id: newId(input.startedAt),
    message_id: messageId,
    attempt_no: input.attemptNo,
    provider_id: input.providerId ?? null,
    started_at: input.startedAt,
    finished_at: input.finishedAt,
    outcome: input.outcome,
    error: input.error ?? null,
    provider_message_id: input.providerMessageId ?? null,
  };
}

function checkPartition({ partition, partitions }: PartitionSelector): void {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 1024)
    throw new RangeError(`partitions must be 1..1024, got ${partitions}`);
  if (!Number.isInteger(partition) || partition < 0 || partition >= partitions)
    throw new RangeError(`partition must be 0..${partitions - 1}, got ${partition}`);
}

/** The columns a settle (a guarded move out of `sending`) may change besides the lease. */
interface SettleChanges {
  status: MessageStatus;
  sent_at?: number;
  due_at?: number;
  last_error?: string;
  provider_id?: string;
  provider_message_id?: string | null;
  attempts?: number;
}

/** One item of the shared group-commit writer: an accepted message, a settle, or a claim. */
type WriteItem =
  | { kind: 'insert'; row: MessageRow }
  | { kind: 'settle'; id: string; options: SettleOptions; changes: SettleChanges }
  | { kind: 'claim'; run: (trx: Database['db']) => Promise<Message[]> };

/** Per item: inserts `true`, settles whether they moved, claims the messages they moved. */
type WriteResult = boolean | Message[];

/** The guarded move of one settle: only the claim whose fencing token is `attempt` may move it. */
async function moveFromSending(
  db: Database['db'],
  { id, options, changes }: { id: string; options: SettleOptions; changes: SettleChanges },
): Promise<boolean> {
  const result = await db
    .updateTable('messages')
    .set({ ...changes, lease_until: null, claim_token: null, updated_at: options.now })
    .where('id', '=', id)
    .where('status', '=', 'sending')
    .where('attempts', '=', options.attempt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

async function sequentially<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const item of items) results.push(await work(item));
  return results;
}

/** The columns a settle may set, besides `updated_at` (every settle) and the cleared lease. */
const SETTLE_COLUMNS = ['status', 'sent_at', 'due_at', 'last_error', 'provider_id', 'provider_message_id', 'attempts'] as const;

/**
 * The `WHERE` of a statement on many claims (distinct ids): a row passes only while it is
 * `sending` under its own claim's fencing token. The comparison sits in each branch (`WHEN id THEN
 * attempts = token`) so that PostgreSQL types every token from `attempts`: as the result of a
 * CASE a token was text there, `attempts = text` failed, and every batch of settles fell back to
 * one transaction per settle. The status test is inside a CASE, as in claimIds: a bare
 * `status = 'sending'` let SQLite scan the status index over every message being sent instead
 * of looking the ids up.
 */
function heldClaims(claims: readonly { id: string; attempt: number }[]) {
  const tokens = sql.join(
    claims.map(({ id, attempt }) => sql`WHEN ${id} THEN attempts = ${attempt}`),
    sql` `,
  );
  const ids = sql.join(claims.map(({ id }) => id));
  return sql<boolean>`id IN (${ids}) AND CASE WHEN status = 'sending' THEN CASE id ${tokens} ELSE FALSE END ELSE FALSE END`;
}

/**
 * The guarded moves of many settles (distinct ids) in ONE statement: each row moves only if it is
 * still `sending` under the settle's own fencing token ({@link heldClaims}), and
 * takes its own values (`CASE id WHEN … THEN … ELSE column END`). `RETURNING id` tells each
 * caller whether ITS row moved (SQLite ≥ 3.35 and PostgreSQL; MySQL moves rows one by one).
 * One statement instead of one per message: at thousands of sends per second, preparing and
 * running a statement per outcome was the largest cost of the writer.
 */
async function moveManyFromSending(trx: Database['db'], items: readonly Extract<WriteItem, { kind: 'settle' }>[]): Promise<boolean[]> {
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
      items.map((item) => ({ id: item.id, value: item.options.now })),
    ),
  ];
  for (const column of SETTLE_COLUMNS) {
    const values = items.flatMap((item) => (item.changes[column] === undefined ? [] : [{ id: item.id, value: item.changes[column] }]));
    if (values.length > 0) assignments.push(caseOf(column, values));
  }
  const held = heldClaims(items.map((item) => ({ id: item.id, attempt: item.options.attempt })));
  const result = await sql<{ id: string }>`UPDATE messages SET ${sql.join(assignments)} WHERE ${held} RETURNING id`.execute(trx);
  const moved = new Set(result.rows.map((row) => row.id));
  return items.map((item) => moved.has(item.id));
}

/**
 * The multi-row INSERT of `rows` new messages. Kysely builds and compiles the statement once per
 * row count (its text depends on nothing else: every row has every column); later batches of that
 * size bind their values to the cached text. Building the query was a visible share of the
 * accept path's CPU at thousands of messages per second.
 */
class MessageInserts {
  private readonly texts = new Map<number, { sql: string; columns: (keyof MessageRow)[] }>();

  async insert(trx: Database['db'], rows: readonly MessageRow[]): Promise<void> {
    const cached = this.texts.get(rows.length);
    if (!cached) {
      const compiled = trx.insertInto('messages').values(rows).compile();
      if (this.texts.size < 1024)
        this.texts.set(rows.length, { sql: compiled.sql, columns: Object.keys(rows[0]!) as (keyof MessageRow)[] });
      await trx.executeQuery(compiled);
      return;
    }
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of cached.columns) parameters.push(row[column]);
    await trx.executeQuery(CompiledQuery.raw(cached.sql, parameters));
  }
}

/**
 * Writes one batch in its transaction: every new row in one multi-row INSERT, then each settle's
 * guarded UPDATE (in id order, so concurrent batches lock rows in the same order), then the
 * attempt rows of the settles that moved in one INSERT, then the claims. Answers per item.
 */
async function writeBatch(
  trx: Database['db'],
  capabilities: DialectCapabilities,
  inserts: MessageInserts,
  items: readonly WriteItem[],
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
  for (const { index, item } of claims) results[index] = await item.run(trx);
  return results;
}

/**
 * Rows whose tenant is not suspended. One uncorrelated subquery per statement (the tenants table
 * is small, read once per statement: not a lookup per message); `tenant_id` and `tenants.id`
 * are never NULL, so NOT IN means what it says.
 */
const notSuspended = sql<boolean>`tenant_id NOT IN (SELECT id FROM tenants WHERE status = ${'suspended'})`;

/** Claim order: due time, then id (ids are time-sortable). */
const byDueThenId = (x: { due_at: number; id: string }, y: { due_at: number; id: string }) =>
  x.due_at - y.due_at || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);

/** Ids per claim statement: keeps `IN (...)` lists well inside every dialect's parameter limit. */
const CLAIM_CHUNK = 500;

/** A constraint message names the index or columns; both spellings contain this. */
const IDEMPOTENCY_CONSTRAINT = /messages_tenant_idempotency_unique|messages\.idempotency_key/;

export class MessagesRepository {
  private readonly writer: GroupCommitWriter<WriteItem, WriteResult>;

  constructor(
    private readonly database: Database,
    options: { groupCommit?: GroupCommitOptions } = {},
  ) {
    const inserts = new MessageInserts();
    this.writer = new GroupCommitWriter<WriteItem, WriteResult>(
      database,
      (trx, items) => writeBatch(trx, database.capabilities, inserts, items),
      options.groupCommit,
      // Only an accepted message must be on disk before its caller hears (the 202). A claim or an
      // outcome lost in an OS crash makes the message be sent again, as at-least-once allows; not
      // waiting for their fsync keeps the dispatcher from idling a sync per claim.
      (items) => items.every((item) => item.kind !== 'insert'),
    );
  }

  private get db() {
    return this.database.db;
  }

  /** Counters of the group commit writer (inserts and settles: items, transactions, fallbacks). */
  get groupCommitStats(): Readonly<GroupCommitStats> {
    return this.writer.stats;
  }

  /** Waits for every insert and settle already submitted (call before closing the database). */
  drain(): Promise<void> {
    return this.writer.drain();
  }

  /**
   * Stores a new message (group-committed: resolves after the transaction holding it commits).
   * @throws DuplicateIdempotencyKeyError when the tenant already has a message with this key.
   */
  async insert(input: NewMessage): Promise<Message> {
    const id = input.id ?? newMessageId(input.now);
    const dueAt = input.dueAt ?? input.now;
    const row: MessageRow = {
      id,
      tenant_id: input.tenantId,
      channel: input.channel,
      recipient: input.recipient,
      payload: JSON.stringify(input.payload),
      status: dueAt > input.now ? 'scheduled' : 'queued',
      due_at: dueAt,
      attempts: 0,
      max_attempts: input.maxAttempts ?? 5,
      shard: shardOf(id),
      provider_id: null,
      provider_message_id: null,
      last_error: null,
      lease_until: null,
      claim_token: null,
      idempotency_key: input.idempotencyKey ?? null,
      request_hash: input.requestHash ?? null,
      created_at: input.now,
      updated_at: input.now,
      sent_at: null,
    };
    try {
      await this.writer.write({ kind: 'insert', row });
    } catch (error) {
      if (row.idempotency_key !== null && isUniqueViolation(error) && IDEMPOTENCY_CONSTRAINT.test(String((error as Error).message))) {
        throw new DuplicateIdempotencyKeyError(row.tenant_id, row.idempotency_key, error);
      }
      throw error;
    }
    return toMessage(row, input.payload);
  }

  /** The tenant's message `id`; `undefined` if it does not exist or belongs to another tenant. */
  async findById(tenantId: string, id: string): Promise<Message | undefined> {
    const row = await this.db.selectFrom('messages').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
    return row && toMessage(row);
  }

  /** Any tenant's message: for delivery and operators only, never behind a tenant's request. */
  async get(id: string): Promise<Message | undefined> {
    const row = await this.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toMessage(row);
  }

  async findByIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<Message | undefined> {
    const row = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('idempotency_key', '=', idempotencyKey)
      .executeTakeFirst();
    return row && toMessage(row);
  }

  /**
   * Claims one message for sending (the Redis due-index path: the id came from the index).
   * Moves it to `sending` if it is queued/scheduled and due, or `sending` with an expired lease.
   * @returns the claimed message (its `attempts` is the fencing token), or `undefined` when it
   * was not claimable (not due, already claimed, finished, canceled, unknown).
   */
  async claim(id: string, options: ClaimOptions): Promise<Message | undefined> {
    const [claimed] = await this.claimMany([id], options);
    return claimed;
  }

  /**
   * Claims many messages at once (the Redis due-index path: a batch of ids from the index): one
   * guarded UPDATE … IN and one SELECT per 500 ids instead of a round trip per id. Same guard as
   * {@link claim}; ids that are not claimable are skipped.
   * @returns the messages this call moved to `sending`, ordered by `dueAt` then id within each
   * 500-id chunk; each one's `attempts` is its fencing token.
   */
  async claimMany(ids: readonly string[], options: ClaimOptions): Promise<Message[]> {
    const claimed: Message[] = [];
    const unique = [...new Set(ids)];
    for (let start = 0; start < unique.length; start += CLAIM_CHUNK) {
      const chunk = unique.slice(start, start + CLAIM_CHUNK);
      claimed.push(...(await this.claimInWriter((trx) => this.claimIds(trx, chunk, options))));
    }
    return claimed;
  }

  /**
   * The embedded-mode due query: atomically claims up to `limit` due messages of a partition —
   * expired leases first, then queued/scheduled by `due_at` — and returns only the ones this call
   * moved. Two concurrent calls never return the same message: candidates are read, then moved
   * by one guarded UPDATE that stamps a random claim token, and read back by that token.
   * (Portable: MySQL has no UPDATE ... RETURNING and MariaDB only from 11.x.)
   */
  async claimDue(
    selector: PartitionSelector &
      ClaimOptions & {
        limit: number;
        /**
         * Default true. False skips the scan for `sending` rows whose lease expired (their
         * dispatcher renews the leases of live sends, so they exist only after a crash or a
         * stalled process): a dispatcher looks for them once per poll, not on
         * every claim of a busy loop.
         */
        expiredLeases?: boolean;
      },
  ): Promise<Message[]> {
    checkPartition(selector);
    const { now, limit } = selector;
    if (limit <= 0) return [];
    return this.claimInWriter(async (trx) => {
      const expired =
        selector.expiredLeases === false
          ? []
          : await this.partitionQuery(trx, selector)
              .select('id')
              .where('status', '=', 'sending')
              .where('lease_until', '<', now)
              .where(notSuspended)
              .orderBy('lease_until')
              .limit(limit)
              .execute();
      // One range scan of the (channel, status, due_at) index per status, merged here: a single
      // `status IN (...) ORDER BY due_at, id` sorts EVERY due row of the backlog on each claim.
      const due: { id: string; due_at: number }[] = [];
      for (const status of PENDING) {
        const rows = await this.partitionQuery(trx, selector)
          .select(['id', 'due_at'])
          .where('status', '=', status)
          .where('due_at', '<=', now)
          // Here too, not only in the claim: a suspended tenant's backlog would otherwise fill
          // every batch of candidates and starve the other tenants' messages due after it.
          .where(notSuspended)
          .orderBy('due_at')
          .limit(limit)
          .execute();
        due.push(...rows.map((row) => ({ id: row.id, due_at: Number(row.due_at) })));
      }
      due.sort(byDueThenId);
      const ids = [...new Set([...expired, ...due].map((r) => r.id))].slice(0, limit);
      return this.claimIds(trx, ids, selector);
    });
  }

  /**
   * The earliest due time of a queued or scheduled message of the partition due at or before
   * `until`, or `undefined`: how long an embedded dispatcher with nothing due may sleep. One
   * index probe per status on `(channel, status, due_at)`.
   */
  async nextDueAt(selector: PartitionSelector & { until: number }): Promise<number | undefined> {
    checkPartition(selector);
    let earliest: number | undefined;
    for (const status of PENDING) {
      const row = await this.partitionQuery(this.db, selector)
        .select('due_at')
        .where('status', '=', status)
        .where('due_at', '<=', selector.until)
        .where(notSuspended)
        .orderBy('due_at')
        .limit(1)
        .executeTakeFirst();
      if (row && (earliest === undefined || Number(row.due_at) < earliest)) earliest = Number(row.due_at);
    }
    return earliest;
  }

  /**
   * Ids to (re)build a Redis due index for one partition: queued/scheduled messages due at or
   * before `untilMs` (score = `dueAt`) and `sending` ones whose lease ends by then (score =
   * `leaseUntil`: claimable again when it passes). Keyset-paged by id: pass the last id as `afterId`.
   */
  async listDueIds(
    selector: PartitionSelector & { untilMs: number; afterId?: string; limit: number },
  ): Promise<{ id: string; dueAt: number }[]> {
    checkPartition(selector);
    let query = this.partitionQuery(this.db, selector)
      .select(['id', 'status', 'due_at', 'lease_until'])
      .where((eb) =>
        eb.or([
          eb.and([eb('status', 'in', PENDING), eb('due_at', '<=', selector.untilMs)]),
          eb.and([eb('status', '=', 'sending'), eb('lease_until', '<=', selector.untilMs)]),
        ]),
      )
      .where(notSuspended)
      .orderBy('id')
      .limit(selector.limit);
    if (selector.afterId !== undefined) query = query.where('id', '>', selector.afterId);
    const rows = await query.execute();
    return rows.map((row) => ({ id: row.id, dueAt: Number(row.status === 'sending' ? row.lease_until : row.due_at) }));
  }

  /**
   * Extends the leases of claims still being sent to `now + leaseMs`, in one statement: a pace
   * wait or a slow vendor may outlast one lease, and an expired lease is claimed again (a
   * duplicate send). Only a claim still holding its fencing token (`attempt`) moves. Written in
   * the shared batch without waiting for its fsync (a lost extension costs at most a resend).
   * @returns how many leases moved.
   */
  async extendLeases(claims: readonly { id: string; attempt: number }[], options: { now: number; leaseMs: number }): Promise<number> {
    if (claims.length === 0) return 0;
    let moved = 0;
    for (let start = 0; start < claims.length; start += CLAIM_CHUNK) {
      const held = heldClaims(claims.slice(start, start + CLAIM_CHUNK));
      // Set, not added to: the writer may run this again (a failed batch's items run alone).
      let movedInChunk = 0;
      await this.claimInWriter(async (trx) => {
        const result = await trx
          .updateTable('messages')
          .set({ lease_until: options.now + options.leaseMs, updated_at: options.now })
          .where(held)
          .executeTakeFirst();
        movedInChunk = Number(result.numUpdatedRows);
        return [];
      });
      moved += movedInChunk;
    }
    return moved;
  }

  /** `sending → sent`. @returns whether it moved (false: not this claim's, or already settled). */
  markSent(id: string, options: SettleOptions & { providerId?: string | null; providerMessageId?: string | null }): Promise<boolean> {
    return this.settle(id, options, {
      status: 'sent',
      sent_at: options.now,
      ...(options.providerId == null ? {} : { provider_id: options.providerId }),
      provider_message_id: options.providerMessageId ?? null,
    });
  }

  /** `sending → scheduled` at `dueAt` after a retryable failure. @returns whether it moved. */
  markRetry(id: string, options: SettleOptions & { dueAt: number; error: string }): Promise<boolean> {
    return this.settle(id, options, { status: 'scheduled', due_at: options.dueAt, last_error: options.error });
  }

  /**
   * `sending → queued`, due `now`, with its claim given back (`attempts` returns to `attempt − 1`):
   * for a claim that never reached a provider (a shutdown cut its pace wait short). No attempt
   * row: nothing was tried. @returns whether it moved.
   */
  release(id: string, options: { attempt: number; now: number }): Promise<boolean> {
    return this.settle(id, options, { status: 'queued', due_at: options.now, attempts: options.attempt - 1 });
  }

  /** `sending → failed` (permanent error or attempts exhausted). @returns whether it moved. */
  markFailed(id: string, options: SettleOptions & { error: string }): Promise<boolean> {
    return this.settle(id, options, { status: 'failed', last_error: options.error });
  }

  /**
   * Cancels a tenant's message if it has not started sending (`queued|scheduled → canceled`).
   * Idempotent: an already canceled message answers `'canceled'`.
   * @returns `'not-found'` (no such message for this tenant) or `'too-late'` (sending or finished).
   */
  async cancel(tenantId: string, id: string, now: number): Promise<CancelResult> {
    const result = await this.db
      .updateTable('messages')
      .set({ status: 'canceled', updated_at: now })
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', PENDING)
      .executeTakeFirst();
    if (result.numUpdatedRows > 0n) return 'canceled';
    const row = await this.db
      .selectFrom('messages')
      .select('status')
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (row === undefined) return 'not-found';
    return row.status === 'canceled' ? 'canceled' : 'too-late';
  }

  /**
   * Deletes up to `limit` finished messages (sent, failed, canceled) due and last changed before
   * `before`, with their attempts; resolves how many. `updated_at` is what retention counts from;
   * `due_at` ranges the scan on the (status, due_at) index. A message sent or failed is never due
   * after its last change; one canceled long before its due time is kept until that has passed too.
   */
  async purgeFinished(options: { before: number; limit: number }): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const ids = (
        await trx
          .selectFrom('messages')
          .select('id')
          .where('status', 'in', FINISHED_STATUSES)
          .where('due_at', '<', options.before)
          .where('updated_at', '<', options.before)
          .limit(options.limit)
          .execute()
      ).map((row) => row.id);
      if (ids.length === 0) return 0;
      await trx.deleteFrom('delivery_attempts').where('message_id', 'in', ids).execute();
      const deleted = await trx.deleteFrom('messages').where('id', 'in', ids).where('status', 'in', FINISHED_STATUSES).executeTakeFirst();
      return Number(deleted.numDeletedRows);
    });
  }

  /**
   * Messages not yet finished (queued, scheduled, sending), by channel and status: read through
   * the status index, so a scrape costs the backlog, not the whole history of sent messages.
   */
  async countOpen(): Promise<StatusCount[]> {
    const rows = await this.db
      .selectFrom('messages')
      .select(['channel', 'status', (eb) => eb.fn.countAll<number>().as('count')])
      .where('status', 'in', OPEN_STATUSES)
      .groupBy(['channel', 'status'])
      .execute();
    return rows.map((row) => ({ channel: row.channel, status: row.status, count: Number(row.count) }));
  }

  /** Stores one delivery attempt (see also `record` on the settle moves, which is atomic with the move). */
  async recordAttempt(input: NewDeliveryAttempt): Promise<DeliveryAttempt> {
    const row = attemptRow(input, input.messageId);
    await this.db.insertInto('delivery_attempts').values(row).execute();
    return toAttempt(row);
  }

  /** A message's attempts, in order. Callers check tenant ownership first (`findById`). */
  async listAttempts(messageId: string): Promise<DeliveryAttempt[]> {
    const rows = await this.db
      .selectFrom('delivery_attempts')
      .selectAll()
      .where('message_id', '=', messageId)
      .orderBy('attempt_no')
      .orderBy('id')
      .execute();
    return rows.map(toAttempt);
  }

  /**
   * Runs a claim inside the group-commit writer's transaction: a claim is a write too (an fsync
   * in SQLite), so it shares the commit with the inserts and settles of the moment. Re-submitted
   * on a transient conflict (deadlock, serialization failure, SQLite busy).
   */
  private claimInWriter(run: (trx: Database['db']) => Promise<Message[]>): Promise<Message[]> {
    return retryTransient(async () => (await this.writer.write({ kind: 'claim', run })) as Message[]);
  }

  private partitionQuery(db: Database['db'], selector: PartitionSelector) {
    let query = db.selectFrom('messages').where('channel', '=', selector.channel);
    if (selector.partitions > 1) query = query.where(sql<number>`shard % ${selector.partitions}`, '=', selector.partition);
    return query;
  }

  /**
   * The guarded claim shared by `claimMany` and `claimDue`, inside the writer's transaction `trx`:
   * one UPDATE, returning the moved rows (read back by token on MySQL, which cannot). A re-claim
   * past `max_attempts` fails the message there.
   */
  private async claimIds(trx: Database['db'], ids: readonly string[], options: ClaimOptions): Promise<Message[]> {
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
      // The guard as one CASE, not `(status IN … AND due_at <= ?) OR (status = … AND …)`: given
      // that OR, SQLite's planner scanned the status index over the whole due backlog instead of
      // looking up the ids (1.1 ms against 0.16 ms for 16 ids among 10,000 queued). A CASE
      // cannot use an index, so every dialect looks the ids up by primary key.
      .where(
        sql<boolean>`CASE WHEN status IN (${sql.join(PENDING)}) THEN due_at <= ${now} WHEN status = ${'sending'} THEN lease_until < ${now} ELSE FALSE END`,
      )
      .where(notSuspended);
    let rows: MessageRow[];
    if (!this.database.capabilities.returning) {
      const moved = await update.executeTakeFirst();
      if (moved.numUpdatedRows === 0n) return [];
      rows = await trx.selectFrom('messages').selectAll().where('id', 'in', ids).where('claim_token', '=', token).execute();
    } else {
      rows = await update.returningAll().execute();
    }
    rows.sort(byDueThenId);
    const claimed: Message[] = [];
    for (const row of rows.map((row) => toMessage(row))) {
      if (row.attempts <= row.maxAttempts) claimed.push(row);
      else
        await moveFromSending(trx, {
          id: row.id,
          options: { attempt: row.attempts, now },
          changes: { status: 'failed', last_error: EXHAUSTED_LEASE_ERROR },
        });
    }
    return claimed;
  }

  /** A guarded move out of `sending`, group-committed with whatever else is being written. */
  private async settle(id: string, options: SettleOptions, changes: SettleChanges): Promise<boolean> {
    return (await this.writer.write({ kind: 'settle', id, options, changes })) as boolean;
  }
}

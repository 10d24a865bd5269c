/**
 * Messages and their delivery attempts: the durable queue of DESIGN.md §6. This file is the
 * repository's facade; its statements live in `messages/`, one file per operation:
 *
 * | file | holds |
 * | --- | --- |
 * | `types.ts` | public types, status sets, row mappers |
 * | `conditions.ts` | the WHERE fragments: claimable, held claim, not suspended, partition |
 * | `batched-writer.ts` | the group-committed writer of inserts, settles and claims |
 * | `insert.ts` | new message rows and their multi-row INSERT |
 * | `settle.ts` | the guarded moves out of `sending`, one or many |
 * | `claim.ts` | the guarded claim and lease extension |
 * | `due.ts` | due candidates, next due time, the due-index rebuild listing |
 * | `hand-off.ts` | the broker hand-off: marking due messages handed off, its due query and listing |
 * | `search.ts` | the admin search by recipient |
 * | `reads.ts`, `attempts.ts`, `cancel.ts`, `feedback.ts`, `purge-finished.ts` | the rest |
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
 * reported as next due) until it is active again: every claim and due query carries the
 * not-suspended condition, so a suspension is enforced by the claim's own statement, on every
 * dialect, whichever instance suspended.
 */

import type { SlotState } from '../../core/fair-share.js';
import type { Database } from '../database.js';
import type { GroupCommitOptions, GroupCommitStats } from '../group-commit.js';
import { listAttempts, recordAttempt } from './messages/attempts.js';
import { GroupCommittedWrites } from './messages/batched-writer.js';
import { cancelMessage } from './messages/cancel.js';
import { CLAIM_CHUNK, claimIds, extendLeases } from './messages/claim.js';
import { checkPartition } from './messages/conditions.js';
import { type DueIndexEntry, dueCandidates, listDueIds, nextDueAt } from './messages/due.js';
import { type EventOutbox, WEBHOOKS_ONLY } from './messages/events.js';
import { confirmMessage } from './messages/feedback.js';
import {
  type HandedOff,
  type HandOffOptions,
  handBack,
  handOffCandidates,
  handOffIds,
  listHandOffIds,
  outstandingHandOffs,
  returnHandOffs,
} from './messages/hand-off.js';
import { insertError, newMessageRow } from './messages/insert.js';
import { purgeFinished } from './messages/purge-finished.js';
import { countOpen, findByIdempotencyKey, findMessage } from './messages/reads.js';
import { listRecent, type RecentSearch, type RecipientSearch, searchByRecipient } from './messages/search.js';
import type { SettleChanges } from './messages/settle.js';
import {
  type CancelResult,
  type ClaimOptions,
  type DeliveryAttempt,
  type Message,
  type NewDeliveryAttempt,
  type NewMessageRow,
  type PartitionSelector,
  type SettleOptions,
  type StatusCount,
  toMessage,
} from './messages/types.js';

export type { EventOutbox } from './messages/events.js';
export type { HandedOff, HandOffOptions } from './messages/hand-off.js';
export type { RecentSearch, RecipientSearch } from './messages/search.js';
export type {
  CancelResult,
  ClaimOptions,
  DeliveryAttempt,
  Message,
  NewDeliveryAttempt,
  NewMessageRow,
  PartitionSelector,
  SettleOptions,
  StatusCount,
  StoredFraudFlag,
} from './messages/types.js';

export class MessagesRepository {
  private readonly writer: GroupCommittedWrites;
  private readonly outbox: EventOutbox;

  /** `outbox`: where status events are written (the bus too, with the broker on); default webhooks only. */
  constructor(
    private readonly database: Database,
    options: { groupCommit?: GroupCommitOptions; outbox?: EventOutbox } = {},
  ) {
    this.outbox = options.outbox ?? WEBHOOKS_ONLY;
    this.writer = new GroupCommittedWrites(database, options.groupCommit, this.outbox);
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
  async insert(input: NewMessageRow): Promise<Message> {
    const row = newMessageRow(input);
    try {
      await this.writer.insert(row);
    } catch (error) {
      throw insertError(row, error);
    }
    return toMessage(row, input.payload);
  }

  /** The tenant's message `id`; `undefined` if it does not exist or belongs to another tenant. */
  findById(tenantId: string, id: string): Promise<Message | undefined> {
    return findMessage(this.db, id, tenantId);
  }

  /** Any tenant's message: for delivery and operators only, never behind a tenant's request. */
  get(id: string): Promise<Message | undefined> {
    return findMessage(this.db, id);
  }

  findByIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<Message | undefined> {
    return findByIdempotencyKey(this.db, tenantId, idempotencyKey);
  }

  /** The tenant's messages to one stored recipient, newest first (keyset: `beforeId`); for operators. */
  searchByRecipient(search: RecipientSearch): Promise<Message[]> {
    return searchByRecipient(this.db, search);
  }

  /** The tenant's messages, newest first (keyset: `beforeId`); for operators. */
  listRecent(search: RecentSearch): Promise<Message[]> {
    return listRecent(this.db, search);
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
   * guarded UPDATE … IN per 500 ids (and a SELECT where the dialect cannot return rows) instead
   * of a round trip per id. Same guard as {@link claim}; ids that are not claimable are skipped.
   * @returns the messages this call moved to `sending`, ordered by `dueAt` then id within each
   * 500-id chunk; each one's `attempts` is its fencing token.
   */
  async claimMany(ids: readonly string[], options: ClaimOptions): Promise<Message[]> {
    const claimed: Message[] = [];
    const unique = [...new Set(ids)];
    for (let start = 0; start < unique.length; start += CLAIM_CHUNK) {
      const chunk = unique.slice(start, start + CLAIM_CHUNK);
      claimed.push(...(await this.writer.claim((trx) => claimIds(trx, this.database.capabilities, chunk, options, this.outbox))));
    }
    return claimed;
  }

  /**
   * The embedded-mode due query: atomically claims up to `limit` due messages of a partition —
   * expired leases first, then queued/scheduled ones shared fairly among the tenants
   * ({@link dueCandidates}) — and returns only the ones this call
   * moved. Two concurrent calls never return the same message: candidates are read, then moved
   * by one guarded UPDATE that stamps a random claim token.
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
        /** The dispatcher's slots, shared among the tenants (`core/fair-share.ts`); default: `limit` slots, none held. */
        slots?: SlotState;
      },
  ): Promise<Message[]> {
    checkPartition(selector);
    if (selector.limit <= 0) return [];
    return this.writer.claim(async (trx) =>
      claimIds(trx, this.database.capabilities, await dueCandidates(trx, selector), selector, this.outbox),
    );
  }

  /**
   * The earliest due time of a queued or scheduled message of the partition due at or before
   * `until`, or `undefined`: how long an embedded dispatcher with nothing due may sleep. One
   * index probe per status on `(channel, status, due_at)`.
   */
  nextDueAt(selector: PartitionSelector & { until: number }): Promise<number | undefined> {
    checkPartition(selector);
    return nextDueAt(this.db, selector);
  }

  /**
   * Ids to (re)build a Redis due index for one partition: queued/scheduled messages due at or
   * before `untilMs` (score = `dueAt`) and `sending` ones whose lease ends by then (score =
   * `leaseUntil`: claimable again when it passes). Keyset-paged by id: pass the last id as `afterId`.
   */
  listDueIds(selector: PartitionSelector & { untilMs: number; afterId?: string; limit: number }): Promise<DueIndexEntry[]> {
    checkPartition(selector);
    return listDueIds(this.db, selector);
  }

  /**
   * Broker mode: marks those of `ids` (from the due index) that are due for a hand-off at `now` as
   * handed off, in one guarded UPDATE per 500 (shared with the writes of the moment). Ids that
   * are not (finished, sending under a live lease, handed off since `republishBefore`, their
   * tenant suspended) are skipped. @returns the rows marked, to publish.
   */
  async handOff(ids: readonly string[], options: HandOffOptions): Promise<HandedOff[]> {
    const marked: HandedOff[] = [];
    const unique = [...new Set(ids)];
    for (let start = 0; start < unique.length; start += CLAIM_CHUNK) {
      const chunk = unique.slice(start, start + CLAIM_CHUNK);
      let rows: HandedOff[] = [];
      // Assigned, not appended: the writer may run the work again.
      await this.writer.claim(async (trx) => {
        rows = await handOffIds(trx, this.database.capabilities, chunk, options);
        return [];
      });
      marked.push(...rows);
    }
    return marked;
  }

  /**
   * Broker mode without a due index: marks up to `limit` messages of the partition due for a
   * hand-off at `now` (pending, never handed off; with `republishBefore`, the sweep's too) and
   * returns them. One dispatcher per partition calls it (the partition's lock holder).
   */
  async handOffDue(selector: PartitionSelector & HandOffOptions & { limit: number; sweep: boolean }): Promise<HandedOff[]> {
    checkPartition(selector);
    if (selector.limit <= 0) return [];
    let rows: HandedOff[] = [];
    await this.writer.claim(async (trx) => {
      const ids = await handOffCandidates(trx, {
        ...selector,
        ...(selector.sweep ? {} : { republishBefore: undefined }),
      });
      rows = await handOffIds(trx, this.database.capabilities, ids, selector);
      return [];
    });
    return rows;
  }

  /** Un-marks `ids` still marked by the hand-off at `handedOffAt` (their publish failed). @returns how many. */
  returnHandOffs(ids: readonly string[], handedOffAt: number): Promise<number> {
    return returnHandOffs(this.db, ids, handedOffAt);
  }

  /** Un-marks a pending message whose job the broker no longer holds. @returns whether it was pending. */
  handBack(id: string): Promise<boolean> {
    return handBack(this.db, id);
  }

  /**
   * Broker mode: how many messages of the partition each tenant has in the broker now (handed
   * off since `republishBefore`, not finished): the hand-off window's slots held.
   */
  async outstandingHandOffs(selector: PartitionSelector & { republishBefore: number }): Promise<Map<string, number>> {
    checkPartition(selector);
    return outstandingHandOffs(this.db, selector);
  }

  /** {@link nextDueAt} of the messages not handed off (broker mode without a due index). */
  nextHandOffAt(selector: PartitionSelector & { until: number }): Promise<number | undefined> {
    checkPartition(selector);
    return nextDueAt(this.db, { ...selector, notHandedOff: true });
  }

  /** {@link listDueIds} in broker mode: what is due for a hand-off, the sweep's rows included. */
  listHandOffIds(
    selector: PartitionSelector & { now: number; republishBefore: number; afterId?: string; limit: number },
  ): Promise<DueIndexEntry[]> {
    checkPartition(selector);
    return listHandOffIds(this.db, selector);
  }

  /**
   * Extends the leases of claims still being sent to `now + leaseMs`, in one statement: a pace
   * wait or a slow vendor may outlast one lease, and an expired lease is claimed again (a
   * duplicate send). Only a claim still holding its fencing token (`attempt`) moves. Written in
   * the shared batch without waiting for its fsync (a lost extension costs at most a resend).
   * @returns how many leases moved.
   */
  async extendLeases(claims: readonly { id: string; attempt: number }[], options: { now: number; leaseMs: number }): Promise<number> {
    let moved = 0;
    for (let start = 0; start < claims.length; start += CLAIM_CHUNK) {
      const chunk = claims.slice(start, start + CLAIM_CHUNK);
      // Assigned, not added to: the writer may run the work again (a failed batch's items run alone).
      let movedInChunk = 0;
      await this.writer.claim(async (trx) => {
        movedInChunk = await extendLeases(trx, chunk, options);
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

  /**
   * `sending → scheduled` at `dueAt` after a retryable failure. Broker mode says where the retry
   * waits: `handedOffAt` a time, in the broker (the job is nak'ed with the delay); null, in the
   * due index (handed off again when due). @returns whether it moved.
   */
  markRetry(id: string, options: SettleOptions & { dueAt: number; error: string; handedOffAt?: number | null }): Promise<boolean> {
    return this.settle(id, options, {
      status: 'scheduled',
      due_at: options.dueAt,
      last_error: options.error,
      ...(options.handedOffAt === undefined ? {} : { handed_off_at: options.handedOffAt }),
    });
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
   * `sending → suppressed`: the recipient was suppressed after the message was accepted, found by
   * the last check before the provider; `error` says which suppression. No attempt row: nothing
   * was tried. @returns whether it moved.
   */
  markSuppressed(id: string, options: SettleOptions & { error: string }): Promise<boolean> {
    return this.settle(id, options, { status: 'suppressed', last_error: options.error });
  }

  /**
   * Cancels a tenant's message if it has not started sending (`queued|scheduled → canceled`).
   * Idempotent: an already canceled message answers `'canceled'`.
   * @returns `'not-found'` (no such message for this tenant) or `'too-late'` (sending or finished).
   */
  cancel(tenantId: string, id: string, now: number): Promise<CancelResult> {
    return cancelMessage(this.db, tenantId, id, now, this.outbox);
  }

  /**
   * Feedback: marks the tenant's message confirmed (its code was used) at `now`, once, if it was
   * handed to a provider (sent, delivered, undelivered). Resolves the message and whether this call
   * confirmed it; undefined when it is not the tenant's.
   */
  confirm(tenantId: string, id: string, now: number): Promise<{ message: Message; confirmed: boolean } | undefined> {
    return confirmMessage(this.db, tenantId, id, now);
  }

  /**
   * Deletes up to `limit` finished messages (sent, failed, canceled) due and last changed before
   * `before`, with their attempts; resolves how many. `updated_at` is what retention counts from;
   * `due_at` ranges the scan on the (status, due_at) index. A message sent or failed is never due
   * after its last change; one canceled long before its due time is kept until that has passed too.
   */
  purgeFinished(options: { before: number; limit: number }): Promise<number> {
    return purgeFinished(this.db, options);
  }

  /**
   * Messages not yet finished (queued, scheduled, sending), by channel and status: read through
   * the status index, so a scrape costs the backlog, not the whole history of sent messages.
   */
  countOpen(): Promise<StatusCount[]> {
    return countOpen(this.db);
  }

  /** Stores one delivery attempt (see also `record` on the settle moves, which is atomic with the move). */
  recordAttempt(input: NewDeliveryAttempt): Promise<DeliveryAttempt> {
    return recordAttempt(this.db, input);
  }

  /** A message's attempts, in order. Callers check tenant ownership first (`findById`). */
  listAttempts(messageId: string): Promise<DeliveryAttempt[]> {
    return listAttempts(this.db, messageId);
  }

  /** A guarded move out of `sending`, group-committed with whatever else is being written. */
  private settle(id: string, options: SettleOptions, changes: SettleChanges): Promise<boolean> {
    return this.writer.settle({ id, options, changes });
  }
}

import type { SlotState } from '../../core/fair-share.js';

/**
 * The due index: which messages of a partition are due, so a dispatcher finds work without scanning
 * the messages table (DESIGN.md §6). It is an INDEX, never the truth: SQL holds every message and
 * its status, and the index can always be rebuilt from SQL (`rebuild`). So:
 * - an entry missing from the index (Redis flushed, failover lost writes) delays its message until
 *   the next rebuild, and loses nothing;
 * - an entry present twice, or present for a message that is already sending, sent or canceled,
 *   is harmless: the dispatcher turns every claimed id into a guarded SQL update
 *   (`... WHERE id = ? AND status IN ('queued','scheduled') AND due_at <= now`), which refuses ids
 *   that are not really due and claimable, so no message is sent twice knowingly.
 *
 * A partition is a short name such as `sms:0` (channel, then partition number); `{`, `}` and
 * whitespace are not allowed. Ids are message ids, which sort by creation time, so entries due at
 * the same millisecond come out oldest first. Times are epoch milliseconds; `now` is always
 * passed in (the caller's clock), never read here.
 */
export interface DueIndex {
  /** Records that each entry's message is due at its `dueAt`, in few round trips; adding one again is harmless. Resolves with how many were not in the index yet. */
  addMany(partition: string, entries: Iterable<DueEntry>): Promise<number>;

  /**
   * Atomically takes up to `limit` entries due at or before `now` and removes them from the index:
   * two concurrent claimers never receive the same entry. They are shared among the tenants as
   * `core/fair-share.ts` says, by `slots` (default: `limit` slots, none held): each tenant's share
   * first, transactional before bulk, weighted round-robin; within a tenant lane by due time, then
   * id. The caller owns what it got; if it cannot process an id (crash, shutdown) the id is
   * recovered by `rebuild`.
   */
  claim(partition: string, now: number, limit: number, slots?: SlotState): Promise<string[]>;

  /**
   * Adds every entry given (from SQL: the partition's `queued` and `scheduled` messages). Never
   * deletes, so it is idempotent and safe while claimers run. When it completes with the store
   * not wiped meanwhile, `needsRebuild` turns `false`. Resolves with how many entries were
   * missing from the index (0 when it was complete): a non-zero count after a steady state means
   * the index had lost entries, which is worth a metric.
   */
  rebuild(partition: string, entries: AsyncIterable<DueEntry> | Iterable<DueEntry>): Promise<number>;

  /**
   * Whether the partition's index must be rebuilt before it can be trusted: `true` when no
   * rebuild has completed on this store, or the store was wiped since (FLUSHALL, a restart
   * without persistence, failover to an empty replica). A dispatcher asks every tick and
   * rebuilds at once on `true`, so a wiped index delays messages by one tick, not one rebuild
   * period. (Entries lost by a failover that kept the marker are restored by the periodic rebuild.)
   */
  needsRebuild(partition: string): Promise<boolean>;

  /**
   * The earliest due time among the partition's entries due at or before `until`, or `undefined`
   * when there is none: a dispatcher with nothing due sleeps until then instead of a whole poll.
   */
  nextDueAt(partition: string, until: number): Promise<number | undefined>;

  /** How many entries the partition holds; with `dueBy`, only those due at or before it (the backlog). */
  size(partition: string, dueBy?: number): Promise<number>;
}

/** One message in the index: its id, its tenant and when it is due (epoch ms). */
export interface DueEntry {
  id: string;
  tenantId: string;
  dueAt: number;
  /**
   * `bulk` entries sit in a lane of their own, claimed only with what the transactional lane
   * leaves of a claim: a campaign's backlog never holds an OTP back. Absent: transactional.
   */
  priority?: 'transactional' | 'bulk';
}

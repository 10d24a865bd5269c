/**
 * The limiter's public contract: rules, requests, decisions and the store interface.
 *
 * Semantics (DESIGN.md §2), for a check of subject `s` at time `t` with request id `q`
 * (L = longest window of the rule set passed):
 * 1. If `q` is given and is in the subject's log: recorded, not removed by an earlier trim or undo,
 *    and with time > t − L → `OK`, the same send retried: the log is trimmed (step 3), nothing
 *    is recorded again, `counts` are as in step 4. (Checked before the ban: answering BANNED to
 *    the retry of a send that was admitted would tell the caller it was not.) Only this step
 *    reads the log before the ban, and only when `q` is given.
 * 2. If a ban on `s` is in force at `t` (its stored end time is `> t`): `BANNED`,
 *    `retryAfterMs` = ban end − t, `counts` = [] (the ban decides without reading the log or the
 *    counters: O(1) whatever the subject's history). Nothing is trimmed, nothing recorded.
 * 3. The subject's log is trimmed to entries with time > t − L. (`check` trims here, `peek` at
 *    its start; `undo`, `reset`, `ban` and `unban` do not.)
 * 4. Every rule `i` is counted for an attempt at `a` (`counts[i]`; `a` = the check's `countAt`, a
 *    scheduled send's due time, or `t` when absent or earlier than `t`; a peek has `a = t`). If some
 *    rule is hit (its count has reached its limit) → `RATE_LIMITED`, `rule` = the first hit rule's
 *    index, nothing recorded; when a hit rule has `banMs > 0` and `a = t` the subject is banned
 *    until `t + max(banMs of hit rules)` (an attempt counted later, `a > t`, breaches nothing
 *    before `a`: it bans nothing). `retryAfterMs` = the later of the ban's end and the earliest
 *    time at which every hit rule would admit again (for a sliding-log rule decided by a window
 *    ending after `a`, a lower bound; see below).
 * 5. Otherwise `OK`: the attempt is recorded under every rule, atomically with the check: in the
 *    log at `a`, in the counters (fixed-window, sliding-counter, token-bucket) at `t`.
 * In every decision but a check's `BANNED` (steps 1 and 4-5) `counts[i]` is rule `i` counted
 * as in step 4, after the trim and before anything this call records; `retryAfterMs` is 0 when
 * allowed. `peek` is the look call: it trims (step 3), then applies step 2 and step 4 without
 * recording or banning, and reports `counts` also when banned; its `retryAfterMs` includes the
 * ban a check would impose.
 *
 * Counting per algorithm (identical in every store; both use IEEE doubles in this order):
 * - `sliding-log`: n(u) = log entries with time in (u − w, u]. Recording the attempt at `a` must
 *   leave every window that contains `a` within the limit, and a scheduled send may have put
 *   entries later than `a`. S = the subject's latest scheduled count time (the largest count time
 *   of an admission whose count time was later than its decision time; kept with the subject,
 *   never lowered by an undo, −∞ when there is none). When S > a: count = the maximum of n(u) over
 *   u = a and over every entry time e with a < e < a + w (the windows containing `a` that end at
 *   an entry). Otherwise count = n(a) (with decision times that never go back, no entry is then
 *   later than `a`, so this is the same maximum, at the cost of one count). Hit when count ≥ limit; then
 *   retryAfter = the largest, over the hit windows u, of (time of the (n(u) − limit + 1)-th oldest
 *   entry in (u − w, u]) + w − u: exact for u = a (the case without later entries); a lower bound
 *   when a later window is hit (an attempt moved later by less is still in a full window; moving
 *   it further may meet other later entries).
 *   The log is one sorted list per subject shared by all rules; it is kept when the set has a
 *   sliding-log rule or a request id is given, and trimmed to entries with time > t − (longest
 *   window of the set): the trim follows the decision time `t`, never `a`, so it drops nothing a
 *   check at `t` or later still counts.
 * - The counter algorithms below count and record a scheduled attempt at `t`, the decision time,
 *   as if it were sent now: their state holds one current window, bucket range or arrival time,
 *   and writing a future one would drop or block the present. Rules that must hold at the time of
 *   sending use `sliding-log` (the default).
 * - `fixed-window`: window index k = floor(t / w); count = admitted in window k. Hit when
 *   count ≥ limit; retryAfter = (k + 1)·w − t.
 * - `sliding-counter`: bucket b = ceil(w / 10) ms, k = floor(t / b), m = t − k·b,
 *   S = sum of buckets k−9..k, c = bucket k−10. Hit when S·b + c·(b − m) ≥ limit·b;
 *   count = floor((S·b + c·(b − m)) / b). retryAfter = b − m (a lower bound: the approximation
 *   does not know when within a bucket its sends happened). |count − exact| ≤ c, where exact is
 *   the admitted count in (t − 10·b, t] (= (t − w, t] when w is a multiple of 10).
 * - `token-bucket` (GCRA): T = w / limit, tat = stored theoretical arrival time (absent: t),
 *   x = max(tat, t). Hit when x + T − t > w; then retryAfter = ceil(x + T − w − t).
 *   Admit: tat = x + T. count = ceil((x − t) / T − 1e-9) (tokens in use; −0 is reported as 0).
 *   Expressions are evaluated left to right: x + T − t is (x + T) − t.
 * Counter state, which decides what a time earlier than a previous one (a replay, another host's
 * clock) reads: fixed-window keeps a count per window index, sliding-counter per bucket index
 * (keep = 0, resp. 10). With n the newest index written, an admission adds 1 to its own index; one
 * that raises n to n' drops the indices of n − keep..n below n' − keep (a check at their time reads
 * 0 from then on). An index written below n − keep (time gone back that far) is never dropped, only
 * cleaned up with the subject (Redis TTL, memory eviction). "Admitted in window k" above means
 * admitted since window k was last dropped; with times that never go back the two are the same.
 * The log and the token bucket need no such rule: the log keeps times, sorted, whatever their
 * order; an earlier time finds the bucket's tat ahead of it.
 * Undo of an attempt admitted at `a`. The counter effects are: fixed-window count of window
 * floor(a / w) decremented if that window is still stored and > 0; sliding-counter bucket
 * floor(a / b) decremented if present and > 0; token-bucket tat −= T (not below a) if a tat is
 * stored. State shared by several rules is updated once (as an admission updates it once).
 * - With request id `q`: only when `q` is in the log (else a no-op: never recorded with that id,
 *   already undone, or trimmed), and then once: log entry `q` removed, then the counter effects
 *   with a = min(the entry's time, `at`): the entry's time is the attempt's count time, later than
 *   its decision time `at` for a scheduled attempt, whose counters were written at `at`.
 * - Without a request id: the caller guarantees that it undoes an attempt admitted at `a` without a
 *   request id, at most once. The counter effects are applied unconditionally (the store cannot tell
 *   whether that attempt exists); sliding-log entries cannot be identified and stay, so a set with a
 *   sliding-log rule needs a request id for its undo to take the attempt back from that rule.
 *   (Counter-only sets need no id, and then no log: a daily quota of 1e6 keeps one counter.)
 *
 * Deferral (`deferUntil`, a check only): when steps 2 or 4 would refuse the attempt, the store
 * instead finds u = the first count time ≥ max(a, the ban's end when one is in force) at which
 * recording it leaves every window of every sliding-log rule within its limit, counting every
 * logged entry, later ones too (`firstAdmitted` in first-admitted.ts: exact). When u ≤ `deferUntil`
 * and no counter rule is hit, the attempt is recorded at u as a check with `countAt` u would record
 * it (step 5) and the decision is `OK` with `deferredTo` = u; otherwise it is refused as in steps
 * 2 and 4, with `retryAfterMs` = u − t when only sliding-log rules or a ban refused it. A deferred
 * check never bans: a wait is not a breach. Step 1 comes first as usual: the check of a deferred
 * attempt's request id, once its time has come, is answered `OK` (the same send) and records nothing.
 *
 * A denial is a value; a thrown error means the store failed (or the arguments were invalid).
 */

/** How one rule counts. See docs/limiter.md for the trade-offs. */
export type Algorithm = 'sliding-log' | 'sliding-counter' | 'fixed-window' | 'token-bucket';

export const ALGORITHMS: readonly Algorithm[] = ['sliding-log', 'sliding-counter', 'fixed-window', 'token-bucket'];

/** "Within `windowMs` at most `limit` admitted sends; on breach ban for `banMs` (0: no ban)." */
export interface Rule {
  /** Window length in milliseconds, a positive integer. */
  windowMs: number;
  /** Admitted sends allowed within one window, a positive integer. */
  limit: number;
  /** Ban length in milliseconds applied when this rule is hit; 0 or absent: no ban. */
  banMs?: number;
  /** Counting algorithm; default `sliding-log` (exact). */
  algorithm?: Algorithm;
  /**
   * Spend this rule from blocks of tokens leased from Redis instead of one store call per decision
   * (`token-bucket` without a ban only; every rule of the set alike). Used only by a Limiter given
   * `leases`; otherwise the rule is exact. Bounds: docs/limiter.md, "Token leases".
   */
  lease?: boolean;
}

/** A rule after validation: every field present. */
export interface NormalizedRule {
  windowMs: number;
  limit: number;
  banMs: number;
  algorithm: Algorithm;
  /** Present (true) only for a leased rule; stores ignore it. */
  lease?: boolean;
}

export interface CheckRequest {
  /** What is counted, e.g. `acme:sms:+8613800000000`. Stores never put it in clear in a key. */
  subject: string;
  /** The rule set; every rule must pass. At least one rule. */
  rules: readonly Rule[];
  /** Unique id of this attempt; the same id is recorded once (see semantics step 1). */
  requestId?: string;
  /** Decision time in epoch ms; default: the store's clock (Redis `TIME` for RedisStore). */
  now?: number;
  /**
   * When the attempt takes effect, in epoch ms (a scheduled send's due time): the sliding-log rules
   * count it and record it at this time, so every window containing it holds; a time earlier than
   * the decision time counts at the decision time. Counter algorithms count it at the decision
   * time (semantics above). Bans, the trim and `Decision.at` stay on the decision time, and an
   * attempt counted later than it is refused without a ban (its breach has not happened).
   */
  countAt?: number;
  /**
   * Defer instead of refusing (semantics above): when the rules or a ban refuse the attempt, record
   * it at the first count time they admit, if that is at most this time (epoch ms), and answer
   * `OK` with `deferredTo`. Never bans. Needs a `requestId` (the deferred send's, to release it by).
   */
  deferUntil?: number;
}

export type DecisionCode = 'OK' | 'BANNED' | 'RATE_LIMITED';

export interface Decision {
  allowed: boolean;
  code: DecisionCode;
  /** Index in `rules` of the first rule hit (`RATE_LIMITED` only). */
  rule?: number;
  /** Milliseconds until a retry can succeed; 0 when allowed. */
  retryAfterMs: number;
  /**
   * Per rule, the admitted count in its window, before this attempt was recorded (for a
   * sliding-log rule the fullest window containing the attempt's count time, see the semantics;
   * for `token-bucket`: the tokens in use, rounded up). Empty for a check answered `BANNED`: a
   * ban in force decides without counting (a peek still counts).
   */
  counts: number[];
  /** The decision time in epoch ms (the store's clock unless `now` was passed). */
  at: number;
  /** Present when a check with `deferUntil` was deferred: the count time it was recorded at (> `at`). */
  deferredTo?: number;
}

/** A look at a subject without recording: `Limiter.peek` and `Limiter.banIfHit`. */
export type PeekRequest = Pick<CheckRequest, 'subject' | 'rules' | 'now'>;

/** Arguments of `Limiter.undo`: the attempt to take back. */
export interface UndoRequest {
  subject: string;
  rules: readonly Rule[];
  /**
   * The request id the admitted attempt was checked with; omit it when the attempt was checked
   * without one (then the caller must undo each such attempt at most once; see the semantics).
   */
  requestId?: string;
  /** `Decision.at` of the admitted attempt (its decision time, also when it had a `countAt`). */
  at: number;
}

/**
 * What {@link LimiterStore.check} decides: a {@link CheckRequest} the Limiter validated, its rules
 * normalized (`normalizeRules`). Same fields, same meaning, down to the script's arguments.
 */
export interface StoreCheck extends Omit<CheckRequest, 'rules'> {
  rules: readonly NormalizedRule[];
}

/** What {@link LimiterStore.peek} and {@link LimiterStore.banIfHit} look at: a {@link PeekRequest}, its rules normalized. */
export interface StorePeek extends Omit<PeekRequest, 'rules'> {
  rules: readonly NormalizedRule[];
}

/** What {@link LimiterStore.undo} takes back: an {@link UndoRequest}, its rules normalized. */
export interface StoreUndo extends Omit<UndoRequest, 'rules'> {
  rules: readonly NormalizedRule[];
}

/**
 * A place where subjects' counters live. Implementations: MemoryStore (in process), RedisStore
 * (Redis standalone or Cluster). Every method is atomic per subject. The decision methods take
 * one request object each, validated by the Limiter; a store reads its fields and never keeps or
 * changes it after the returned promise settles.
 */
export interface LimiterStore {
  /** Decide and, when allowed, record (semantics above). */
  check(request: StoreCheck): Promise<Decision>;
  /**
   * The decision a check would make now, recording nothing and banning nothing
   * (`allowed` false when banned or a rule is at its limit).
   */
  peek(request: StorePeek): Promise<Decision>;
  /**
   * A peek that bans as a check would: when no ban is in force and a hit rule has `banMs > 0`, the
   * subject is banned until `t + max(banMs of the hit rules)`; nothing is recorded. For a ban
   * deferred past a check (the check ran with its rules' bans set to 0), so that it counts only
   * the admissions still standing at `t` (the risk engine, after taking back a denied check's).
   */
  banIfHit(request: StorePeek): Promise<Decision>;
  /**
   * Take back an admitted attempt (a later admission step rejected it): it no longer counts under
   * any rule. With a request id, taking back an attempt that is not logged is a no-op; without one
   * the counter effects are applied at `at` unconditionally and the log is untouched.
   */
  undo(request: StoreUndo): Promise<void>;
  /** Forget the subject's history and ban. */
  reset(subject: string): Promise<void>;
  /** Ban the subject for `ms` from `now` (default: the store's clock). Replaces a shorter ban. */
  ban(subject: string, ms: number, now: number | undefined): Promise<void>;
  /**
   * Lift the subject's ban. Resolves whether a ban record was still stored, not yet cleaned up:
   * true for a ban in force on the store's clock; also for an ended ban whose cleanup is later than
   * its end (RedisStore: the key's TTL is at least `minTtlMs`). Cleanup runs on the store's clock
   * (Redis TIME, the MemoryStore's clock), so with explicit `now` values true does not say the ban
   * was in force at those times.
   */
  unban(subject: string): Promise<boolean>;
  /** Release resources the store owns (never a client it was given). */
  close?(): Promise<void>;
}

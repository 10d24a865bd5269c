/**
 * Risk rules over events: the kinds beside the limiter's windows, their validation, and the
 * contract of the stores that keep their state.
 *
 * A rule's state belongs to one subject: the rule, and the values of its `key` dimensions in one
 * event (`["device"]` → one state per device). Kinds (semantics, for a check at time `t`):
 * - `window`: the limiter's rule as it is ({@link Rule}); the subject's admitted checks.
 * - `last-n`: fires while at least `m` of the subject's last `n` recorded outcomes equal `outcome`.
 *   Outcomes are recorded by events (`record`), never by checks. Exact.
 * - `distinct`: the values of dimension `of` seen with the subject within `(t − windowMs, t]`
 *   (a value's time is the latest check or event that recorded it). Fires when the event's value
 *   is not among them and they already number `limit`; a fired check does not add the value, so
 *   the set never holds more than `limit` values and is exact (members are 48-bit hashes of the
 *   values: two values of one subject collide with probability ≤ limit²/2^49). Above
 *   `RISK_LIMITS.distinctExact` (10,000) a HyperLogLog per window-long generation (⌊t / w⌋) instead,
 *   of 16384 registers (standard error 0.81%): the count is the estimate of the union of this
 *   generation and the last (the values of the last one to two windows); it fires when that
 *   estimate is at least `limit`, for a known value too (an HLL cannot tell known from new), and
 *   then adds nothing; `retryAfterMs` is the time until the generation turns over.
 * - `seen`: fires when the value of `of` was not recorded for the subject before (with `windowMs`:
 *   within the window; a value recorded between one and two windows ago may still count as seen,
 *   since the filter turns over by whole windows). A Bloom filter of `bits` bits and `hashes` hash
 *   functions sized for `capacity` values at `falsePositiveRate`: never a false "not seen" (no
 *   false negatives); a false "seen" with probability ≤ `falsePositiveRate` while at most
 *   `capacity` values were recorded in one filter.
 * A rule fires → its `effect` (`deny`, `review`) applies unless its `mode` is `shadow`.
 */
import type { Algorithm } from '../types.js';

export const RISK_RULE_KINDS = ['window', 'last-n', 'distinct', 'seen'] as const;
export type RiskRuleKind = (typeof RISK_RULE_KINDS)[number];

export const RISK_MODES = ['enforce', 'shadow'] as const;
export type RiskMode = (typeof RISK_MODES)[number];

export const RISK_EFFECTS = ['deny', 'review'] as const;
export type RiskEffect = (typeof RISK_EFFECTS)[number];

/** Bounds of a rule set (a check costs one state per rule; values are hashed but bounded). */
export const RISK_LIMITS = {
  rules: 32,
  dimensions: 16,
  keyDimensions: 8,
  valueLength: 256,
  nameLength: 64,
  windowMs: 31 * 86_400_000,
  lastN: 1000,
  /** `distinct.limit` up to this is exact (a set of digests); above it a HyperLogLog (approximate). */
  distinctExact: 10_000,
  distinctLimit: 1_000_000_000,
  seenCapacity: 1_000_000,
  outcomeLength: 64,
  /**
   * A sliding-log window rule (its ban included) of at most this limit is decided by the event
   * store with the event rules of its check (one packed string per subject, read and written
   * whole); larger ones and other algorithms go to the limiter.
   */
  storeWindowLimit: 256,
} as const;

interface BaseRule {
  /** Unique in its set; names the rule in reasons and metrics, and its state (a rename starts afresh). */
  name: string;
  /** Dimensions whose values form the subject, at least one. */
  key: string[];
  mode: RiskMode;
  effect: RiskEffect;
}

export interface WindowRiskRule extends BaseRule {
  kind: 'window';
  windowMs: number;
  limit: number;
  banMs: number;
  algorithm: Algorithm;
}

export interface LastNRiskRule extends BaseRule {
  kind: 'last-n';
  n: number;
  m: number;
  outcome: string;
}

export interface DistinctRiskRule extends BaseRule {
  kind: 'distinct';
  of: string;
  windowMs: number;
  limit: number;
}

export interface SeenRiskRule extends BaseRule {
  kind: 'seen';
  of: string;
  /** Absent: ever (the filter is kept while used; see the stores' retention). */
  windowMs?: number;
  /** Values one filter is sized for (default 1000). */
  capacity: number;
  /** Bound of false "seen" answers at `capacity` values (default 0.001). */
  falsePositiveRate: number;
}

/** A validated rule, every default filled in. */
export type RiskRule = WindowRiskRule | LastNRiskRule | DistinctRiskRule | SeenRiskRule;
export type EventRiskRule = LastNRiskRule | DistinctRiskRule | SeenRiskRule;

/** One event's dimension values by name. */
export type Dimensions = Readonly<Record<string, string>>;

/** One operation on one subject's state, as the event stores take them. */
export type EventOp =
  | { kind: 'last-n'; subject: string; n: number; m: number; outcome: string /** Outcome to record first, if any. */; push?: string }
  | { kind: 'distinct'; subject: string; windowMs: number; limit: number; value: string; record: boolean }
  | { kind: 'seen'; subject: string; windowMs?: number; bits: number; hashes: number; value: string; record: boolean }
  /** Claims `subject` for `ttlMs` (an event's request id): fires when it was already claimed; `ttlMs: 0` releases it. */
  | { kind: 'claim'; subject: string; ttlMs: number }
  /**
   * A sliding-log window decided by the event store ({@link EventStore.decide}), in the limiter's
   * order: `member` (a request id) already admitted within the window: not fired, records nothing
   * (a retry). Else a ban in force (its end > t): fired, `banned`, `retryAfterMs` to its end,
   * nothing counted when `record` (`count` 0; a look counts). Else the subject's admissions in
   * `(t − windowMs, t]` are counted; fires when they number `limit` already, and then with
   * `banMs > 0` bans until `t + banMs` when `record` (in `decide` whatever the check's veto: the
   * breach is of admissions that stand), `retryAfterMs` the later of the ban's end and the
   * window's. Records `t` when `record`, not fired, and (in `decide`) the check is not vetoed.
   */
  | { kind: 'window'; subject: string; windowMs: number; limit: number; banMs?: number; record: boolean; member?: string };

/** What one {@link EventOp} found (before what it recorded, except `last-n`'s pushed outcome). */
export interface EventResult {
  fired: boolean;
  /** last-n: matching outcomes among the last n; distinct: values in the window; seen: 1 seen, 0 not; claim: 1 claimed before, 0 not. */
  count: number;
  /** distinct, when fired: ms until the oldest value leaves the window; window, when fired: until one admission does, or the ban ends. */
  retryAfterMs?: number;
  /** window: fired by a ban in force. */
  banned?: true;
}

/** One check's ops for {@link EventStore.decide}: `vetoes[i]` marks an op whose firing denies the check. */
export interface CheckOps {
  ops: readonly EventOp[];
  vetoes: readonly boolean[];
  /** Denied already (by a rule decided elsewhere): no window op records. */
  vetoed?: boolean;
}

/**
 * Keeps the state of event rules. Each op is atomic on its subject; ops of one call are applied in
 * order. `now` is epoch ms; absent, the store's clock (Redis `TIME`).
 */
export interface EventStore {
  apply(ops: readonly EventOp[], now?: number): Promise<EventResult[]>;
  /**
   * One check in one atomic step: its ops are applied in order as by `apply`, except that window
   * ops record only when the check is not vetoed — `check.vetoed`, or an op `i` with
   * `check.vetoes[i]` that fired (window ops included). So a denied check writes no window and
   * needs no undo. Absent when the store cannot hold a check's keys in one atomic call (a Cluster).
   */
  readonly decide?: (check: CheckOps, now?: number) => Promise<EventResult[]>;
  close?(): Promise<void>;
}

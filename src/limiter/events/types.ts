/**
 * Risk rules over events: the kinds beside the limiter's windows, and the contract of the stores
 * that keep their state.
 *
 * A rule's state belongs to one subject: the rule, and the values of its `key` dimensions in one
 * event (`["device"]` → one state per device). Each kind is one module of ./kinds/ (its
 * parameters, validation, state bound, op and both stores' evaluation; the semantics are in its
 * header): `window` (the limiter's rule as it is), `last-n`, `distinct`, `seen`. The lists and
 * unions here derive from the table, ./kinds/index.ts.
 * A rule fires → its `effect` (`deny`, `review`) applies unless its `mode` is `shadow`.
 */
import type { EventResult } from './base.js';
import type { EventOp, RiskRule } from './kinds/index.js';

export * from './base.js';
export type { ClaimOp } from './kinds/claim.js';
export type { DistinctOp, DistinctRiskRule } from './kinds/distinct.js';
export { type EventOp, isRiskRuleKind, RISK_RULE_KINDS, type RiskReasonCode, type RiskRule, type RiskRuleKind } from './kinds/index.js';
export type { LastNOp, LastNRiskRule } from './kinds/last-n.js';
export type { SeenOp, SeenRiskRule } from './kinds/seen.js';
export type { WindowOp, WindowRiskRule } from './kinds/window.js';

/** The rules outcome events write (every kind but `window`, which counts checks). */
export type EventRiskRule = Exclude<RiskRule, { kind: 'window' }>;

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

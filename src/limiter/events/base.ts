/**
 * What every risk rule kind (./kinds/) shares: the bounds of a rule set, modes and effects, a
 * rule's common fields, an event's dimensions and what one op on a subject's state found.
 * Re-exported by ./types.ts.
 */

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

/** The fields every rule has, beside its kind and the kind's parameters. */
export interface BaseRule {
  /** Unique in its set; names the rule in reasons and metrics, and its state (a rename starts afresh). */
  name: string;
  /** Dimensions whose values form the subject, at least one. */
  key: string[];
  mode: RiskMode;
  effect: RiskEffect;
}

/** One event's dimension values by name. */
export type Dimensions = Readonly<Record<string, string>>;

/** What one op found (before what it recorded, except `last-n`'s pushed outcome). */
export interface EventResult {
  fired: boolean;
  /** last-n: matching outcomes among the last n; distinct: values in the window; seen: 1 seen, 0 not; claim: 1 claimed before, 0 not. */
  count: number;
  /** distinct, when fired: ms until the oldest value leaves the window; window, when fired: until one admission does, or the ban ends. */
  retryAfterMs?: number;
  /** window: fired by a ban in force. */
  banned?: true;
}

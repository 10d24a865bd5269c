/**
 * The table of risk rule kinds, one row per kind (its descriptor: ./kind.ts), and what derives
 * from it: the kinds' names, the rule and op unions, the reason codes, and the lookups the engine,
 * the stores and validation dispatch through. A new kind is its module here, its row, and its op's
 * piece of `risk-batch.lua` (docs/architecture.md, "Where to add").
 */
import { type ClaimOp, claimOp } from './claim.js';
import { distinctKind } from './distinct.js';
import type { EventOpHandler, RiskKind, SubjectOp } from './kind.js';
import { lastNKind } from './last-n.js';
import { seenKind } from './seen.js';
import { windowKind } from './window.js';

// biome-ignore lint/suspicious/noExplicitAny: any descriptor, whatever its rule, op and codes
type AnyKind = RiskKind<any, any, any>;

/** The table, typed as one row per name, each that kind's descriptor (a row under another name does not compile). */
const table = <const T extends { readonly [K in keyof T]: AnyKind & { readonly name: K } }>(rows: T): T => rows;

/** Every rule kind by name, in the order lists show them. */
export const RISK_KINDS = table({
  window: windowKind,
  'last-n': lastNKind,
  distinct: distinctKind,
  seen: seenKind,
});

type Kinds = typeof RISK_KINDS;
export type RiskRuleKind = keyof Kinds;
/** A validated rule of any kind, every default filled in. */
export type RiskRule = { [K in RiskRuleKind]: ReturnType<Kinds[K]['normalize']> }[RiskRuleKind];
/** One operation on one subject's state, as the event stores take them: a kind's, or a claim. */
export type EventOp = { [K in RiskRuleKind]: ReturnType<Kinds[K]['op']> }[RiskRuleKind] | ClaimOp;
/** Every code a fired rule's reason may carry. */
export type RiskReasonCode = { [K in RiskRuleKind]: Kinds[K]['codes'][number] }[RiskRuleKind];

export const RISK_RULE_KINDS = Object.keys(RISK_KINDS) as RiskRuleKind[];

export const isRiskRuleKind = (kind: unknown): kind is RiskRuleKind => typeof kind === 'string' && Object.hasOwn(RISK_KINDS, kind);

/** The descriptor of a rule's kind. */
export const kindOf = (rule: RiskRule): RiskKind<RiskRule, EventOp, RiskReasonCode> => RISK_KINDS[rule.kind];

/** How the stores apply each op kind: each rule kind's, and the claim. */
const OPS: Readonly<Record<EventOp['kind'], EventOpHandler<EventOp>>> = {
  ...(Object.fromEntries(Object.values(RISK_KINDS).map((kind) => [kind.name, kind.store])) as Record<
    RiskRuleKind,
    EventOpHandler<EventOp>
  >),
  claim: claimOp as EventOpHandler<SubjectOp> as EventOpHandler<EventOp>,
};

/** The handler of an op's kind. */
export const opHandler = (op: EventOp): EventOpHandler<EventOp> => OPS[op.kind];

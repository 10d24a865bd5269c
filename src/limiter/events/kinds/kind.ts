/**
 * What a risk rule kind is: one descriptor owning its parameters and their validation, the
 * dimensions it reads, its worst-case state, the op it asks of the event stores, the reason it
 * gives when it fires, and how each store applies that op (in process, and as its letter of
 * `risk-batch.lua`, whose piece is `../scripts/includes/<kind>.lua`). The table of kinds is
 * ./index.ts; the engine, the stores, validation and costs dispatch through it.
 */
import type { BaseRule, Dimensions, EventResult } from '../base.js';
import type { ValueHasher } from '../hashing.js';

/** A rule set or an event that breaks a bound; `field` is its path (`rules[1].windowMs`, `dimensions.phone`). */
export class RiskRuleError extends RangeError {
  override readonly name = 'RiskRuleError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** A rule as given, before validation. */
export type RuleInput = Record<string, unknown>;

const isInt = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

/** `rule[field]` (or `fallback`), an integer in [min, max]; `path` names the rule in the error. */
export function int(rule: RuleInput, field: string, path: string, min: number, max: number, fallback?: number): number {
  const value = rule[field] ?? fallback;
  if (!isInt(value, min, max)) throw new RiskRuleError(`${path}.${field}`, `must be an integer in [${min}, ${max}]`);
  return value;
}

/** `rule[field]`, a string of 1 to `maxLength` characters. */
export function text(rule: RuleInput, field: string, path: string, maxLength: number): string {
  const value = rule[field];
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
    throw new RiskRuleError(`${path}.${field}`, `must be a string of 1 to ${maxLength} characters`);
  }
  return value;
}

/** `rule[field]` (or `fallback`), one of `values`. */
export function oneOf<T extends string>(rule: RuleInput, field: string, path: string, values: readonly T[], fallback: T): T {
  const value = rule[field] ?? fallback;
  if (!values.includes(value as T)) throw new RiskRuleError(`${path}.${field}`, `must be one of ${values.join(', ')}`);
  return value as T;
}

/** An op on one subject's state: a kind's, or the event dedupe's claim (./claim.ts). */
export interface SubjectOp {
  kind: string;
  subject: string;
}

/** What the in-process store gives an op. */
export interface MemoryContext {
  readonly hasher: ValueHasher;
  /** In `decide`: where a window op queues its record (made only when the check is not vetoed); undefined: record now. */
  readonly writes: (() => void)[] | undefined;
  /**
   * The subject's state named `name` (one per subject and name), made by `create` when absent.
   * `bytesOf` counts it (by ../cost.ts's units) when the call ends; the store drops the oldest
   * subjects past its bounds.
   */
  state<S extends { bytes: number }>(subject: string, name: string, create: () => S, bytesOf: (state: S) => number): S;
}

/** What the Redis store gives an op to encode it. */
export interface RedisContext {
  /** The subject's key base, `${prefix}:{tag}:`: every key of the op starts with it (one slot). */
  readonly base: string;
  readonly hasher: ValueHasher;
  /** The call's time; undefined: Redis TIME. An op whose keys need the time (a generation) fixes it. */
  readonly now: number | undefined;
  /** TTL of last-n state after its last push. */
  readonly lastNRetentionMs: number;
  /** TTL of a `seen` filter without a window after its last new value. */
  readonly seenRetentionMs: number;
}

/** An op as `risk-batch.lua` takes it: its keys, its letter and arguments, and the time it fixed. */
export interface EncodedOp {
  keys: string[];
  args: (string | number | Buffer)[];
  now: number | undefined;
}

/** One reply row of `risk-batch.lua`: fired (0/1; 2 a window's ban in force), count, retryAfterMs. */
export type ReplyRow = readonly [number, number, number];

/** How both event stores apply one kind of op. */
export interface EventOpHandler<Op extends SubjectOp> {
  /** In process, at time `t`. */
  memory(op: Op, t: number, context: MemoryContext): EventResult;
  /** For `risk-batch.lua`. */
  encode(op: Op, context: RedisContext): EncodedOp;
  /** The script's reply row as the op's result. */
  result(row: ReplyRow): EventResult;
}

/** What the engine knows when it makes a rule's op for one event. */
export interface OpContext {
  /** The rule's subject for this event (`ruleSubject`). */
  subject: string;
  dimensions: Dimensions;
  /** Record the event in the rule's state (a check with `record`, or an outcome event). */
  record: boolean;
  /** An outcome event's outcome (`RiskEngine.record`); undefined for a check. */
  outcome: string | undefined;
  /** The check's request id, when its caller gave one. */
  requestId: string | undefined;
}

/** A fired rule's reason, as its kind gives it (the engine adds rule, kind, effect and shadow). */
export interface KindReason<Code extends string = string> {
  code: Code;
  count?: number;
  limit?: number;
  retryAfterMs?: number;
}

/**
 * A risk rule kind. Methods (not function properties), so a table row of one kind serves where
 * any kind is expected (./index.ts `kindOf`); each is called only with rules and ops of its kind.
 */
export interface RiskKind<Rule extends BaseRule & { kind: string }, Op extends SubjectOp, Code extends string = string> {
  readonly name: Rule['kind'];
  /** Its parameters beside name, kind, key, mode and effect, in the library's units (`windowMs`). */
  readonly parameters: readonly string[];
  /** The reason codes it answers with. */
  readonly codes: readonly Code[];
  /** Outcome events (`RiskEngine.record`) write its state; false: it counts checks only (a window). */
  readonly recordsEvents: boolean;
  /** Its parameters validated, defaults filled in, on `base` (the common fields, validated); errors name `${path}.<field>`. */
  normalize(input: RuleInput, path: string, base: BaseRule): Rule;
  /** Dimensions an event needs for the rule beside its key. */
  reads(rule: Rule): readonly string[];
  /** The worst-case bytes of one subject's state, and how they add up (for messages and docs). */
  stateBytes(rule: Rule): { bytes: number; why: string };
  /** The rule's op for one event. */
  op(rule: Rule, context: OpContext): Op;
  /** Why the rule fired, from its op's result; `record`: a check (else a look). */
  reason(rule: Rule, result: EventResult, record: boolean): KindReason<Code>;
  /** How the stores apply its op. */
  readonly store: EventOpHandler<Op>;
}

/** A reply row as a result without `retryAfterMs` (kinds that give none). */
export const plainResult = ([fired, count]: ReplyRow): EventResult => ({ fired: fired === 1, count });

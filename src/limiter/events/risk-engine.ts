/**
 * The risk engine: judges one event against a rule set.
 *
 * One call: when the event store offers `decide` (in process, a standalone Redis), the whole check
 * is one atomic store call (on Redis one `risk-batch` script call per batch of checks): its
 * sliding-log window rules up to `RISK_LIMITS.storeWindowLimit`, bans included, are kept by the
 * event store beside the event rules, and write only when no enforced deny rule of the check
 * fired, so a denied check writes no window and needs no undo; a ban is written in the same step
 * by a breach of admissions that stand. Window rules beyond that (other algorithms, larger
 * limits) go to the limiter first, and their verdict vetoes the call.
 *
 * Otherwise (a Cluster, or `oneCall: false`) window rules go to the limiter (one subject per
 * rule), event rules to the {@link EventStore}; both are issued in the same turn, so with Redis a
 * check costs one `check-batch` and one `risk-batch` script call per slot touched, sent together.
 * Where a window rule's state lives thus depends on the deployment, never on the check.
 *
 * Bans of window rules in the limiter are deferred: the check runs with the rule's `banMs` at 0
 * (it denies, never bans), and once the check's own undos (and those this process issued for the
 * subject meanwhile) have landed, `banIfHit` bans only if the admissions standing then still hit
 * the rule. So a check taken back never counts towards a ban, except one still in flight
 * elsewhere at that instant (another process, or a check not yet answered).
 *
 * Decision: `deny` if an enforced deny rule fires, else `review` if an enforced review rule
 * fires, else `allow`; shadow rules are evaluated and recorded the same way and only reported.
 * A check answered `deny` takes its window admissions back (a denied check records nothing in
 * window rules), awaited before the answer returns (see `settle`); event rules keep
 * what they recorded (a distinct rule that fired added nothing).
 */
import { randomBytes } from 'node:crypto';
import type { FallbackMode } from '../degrade/fallback-policy.js';
import type { CheckRequest, Decision, PeekRequest, Rule, UndoRequest } from '../types.js';
import { kindOf } from './kinds/index.js';
import type { KindReason } from './kinds/kind.js';
import { eventRulesFed, validateDimensions } from './rules.js';
import {
  type CheckOps,
  type Dimensions,
  type EventOp,
  type EventResult,
  type EventRiskRule,
  type EventStore,
  RISK_LIMITS,
  type RiskEffect,
  type RiskReasonCode,
  type RiskRule,
  type WindowRiskRule,
} from './types.js';
import { UndosInFlight } from './undos-in-flight.js';

/** What the engine needs of the limiter: a `Limiter` or a `DegradingLimiter` fits. */
export interface WindowLimiter {
  check(request: CheckRequest): Promise<Decision & { degraded?: FallbackMode }>;
  undo(request: UndoRequest & { degraded?: FallbackMode }): Promise<unknown>;
  /** A window rule's deferred ban (`Limiter.banIfHit`); `undefined`: nothing was asked. */
  banIfHit(request: PeekRequest & { degraded?: FallbackMode }): Promise<Decision | undefined>;
}

/** The event store's answer, marked with the fallback mode that made it when degraded. */
export interface AppliedEvents {
  results: EventResult[];
  degraded?: FallbackMode;
}

/** What the engine needs of the event store: {@link directEvents} or a `DegradingEventStore`. */
export interface EventApplier {
  apply(ops: readonly EventOp[], now?: number): Promise<AppliedEvents>;
  /**
   * {@link EventStore.decide}, when the store offers it; `undefined` from it: not decided (the
   * store is away), judge the check apart.
   */
  readonly decide?: ((check: CheckOps, now?: number) => Promise<AppliedEvents | undefined>) | undefined;
}

/** An event store used as it is (no fallback). */
export const directEvents = (store: EventStore): EventApplier => {
  const decide = store.decide;
  return {
    apply: async (ops, now) => ({ results: await store.apply(ops, now) }),
    decide: decide && (async (check, now) => ({ results: await decide(check, now) })),
  };
};

/** A window rule the event store keeps when it decides checks in one call. */
const inStore = (rule: WindowRiskRule) => rule.algorithm === 'sliding-log' && rule.limit <= RISK_LIMITS.storeWindowLimit;

/** A rule whose firing denies the check. */
const vetoes = (rule: RiskRule) => rule.mode === 'enforce' && rule.effect === 'deny';

export type RiskVerdict = 'allow' | RiskEffect;

/** One rule that fired. */
export interface RiskReason {
  rule: string;
  kind: RiskRule['kind'];
  code: RiskReasonCode;
  effect: RiskEffect;
  count?: number;
  limit?: number;
  retryAfterMs?: number;
  shadow: boolean;
}

export interface RiskDecision {
  allowed: boolean;
  decision: RiskVerdict;
  /** Every rule that fired, shadow ones included, in rule-set order. */
  reasons: RiskReason[];
  /** Per rule, in order: what it alone would have decided (for metrics). */
  verdicts: RiskVerdict[];
  /** Set when a store was down and a fallback mode decided part of the answer. */
  degraded?: FallbackMode;
}

export interface RiskEngineOptions {
  /** Window rules with recording (a `Limiter` or `DegradingLimiter`). */
  windows: WindowLimiter;
  /** Window rules without recording (`record: false`). */
  peek: { peek(request: PeekRequest): Promise<Decision> };
  events: EventApplier;
  /**
   * Told when taking back a denied check's window admissions failed (they then stay counted:
   * later checks of those subjects may be denied early, never admitted late).
   */
  onUndoError?(error: unknown): void;
  /**
   * Default true: decide a check in one event-store call when the store offers `decide`. False
   * keeps every window rule in the limiter, as on a Redis Cluster (the tests and bench/risk.ts
   * compare the two paths on one store).
   */
  oneCall?: boolean;
}

export interface RiskCheckOptions {
  /** Default true: record the event in every rule's state. */
  record?: boolean;
  requestId?: string;
  now?: number;
}

/**
 * How long `record` remembers an event's request id: a client's retry horizon, not the rules'
 * windows. Only `last-n` would count a repeat twice (distinct and seen values are idempotent), and
 * a key per event kept for a window of days would cost more memory than the rules themselves.
 */
export const EVENT_DEDUPE_MS = 600_000;

/** The subject of one rule's state: scope, rule name and key values, unambiguous by lengths and JSON. */
export function ruleSubject(scope: string, rule: RiskRule, dimensions: Dimensions): string {
  return `${scope}${rule.name.length}:${rule.name}:${JSON.stringify(rule.key.map((name) => dimensions[name]))}`;
}

/**
 * The limiter's rule sets of a window rule: for checks and undos without its ban (deferred, see
 * above), for peeks and `banIfHit` with it; one array per rule object so the limiter's validation
 * is cached.
 */
const windowSets = new WeakMap<WindowRiskRule, { check: readonly Rule[]; ban: readonly Rule[] }>();
function limiterRules(rule: WindowRiskRule, withBan = false): readonly Rule[] {
  let sets = windowSets.get(rule);
  if (!sets) {
    const check: Rule[] = [{ windowMs: rule.windowMs, limit: rule.limit, banMs: 0, algorithm: rule.algorithm }];
    sets = { check, ban: rule.banMs === 0 ? check : [{ ...check[0]!, banMs: rule.banMs }] };
    windowSets.set(rule, sets);
  }
  return withBan ? sets.ban : sets.check;
}

type WindowDecision = Decision & { degraded?: FallbackMode };

/** A rule's op for one event, made by its kind. */
function ruleOp(
  scope: string,
  rule: RiskRule,
  dimensions: Dimensions,
  record: boolean,
  outcome: string | undefined,
  requestId?: string,
): EventOp {
  return kindOf(rule).op(rule, { subject: ruleSubject(scope, rule, dimensions), dimensions, record, outcome, requestId });
}

export class RiskEngine {
  /** Undos of banning window rules this engine sent, until they land (a deferred ban waits for them). */
  private readonly undosInFlight = new UndosInFlight();
  /** Request ids of checks without one: this prefix (72 random bits) and a counter. */
  private readonly idPrefix = randomBytes(9).toString('base64url');
  private idCount = 0;

  constructor(private readonly options: RiskEngineOptions) {}

  /**
   * Judges an event. `scope` prefixes every subject (e.g. the tenant and action); rules must be
   * normalized (`normalizeRiskRules`). Throws `RiskRuleError` for a missing or oversized dimension.
   */
  async check(scope: string, rules: readonly RiskRule[], dimensions: Dimensions, options: RiskCheckOptions = {}): Promise<RiskDecision> {
    validateDimensions(rules, dimensions);
    const decide = this.options.oneCall === false ? undefined : this.options.events.decide;
    return decide ? this.checkInOneCall(decide, scope, rules, dimensions, options) : this.checkApart(scope, rules, dimensions, options);
  }

  private async checkInOneCall(
    decide: NonNullable<EventApplier['decide']>,
    scope: string,
    rules: readonly RiskRule[],
    dimensions: Dimensions,
    options: RiskCheckOptions,
  ): Promise<RiskDecision> {
    const record = options.record ?? true;
    const now = options.now;
    const requestId = options.requestId ?? this.newRequestId();
    const limiterRulesOf = rules.filter((rule): rule is WindowRiskRule => rule.kind === 'window' && !inStore(rule));
    const limiterDecisions = await Promise.all(
      limiterRulesOf.map((rule) => this.windowCheck(rule, scope, dimensions, record, requestId, now)),
    );
    const storeRules = rules.filter((rule) => rule.kind !== 'window' || inStore(rule));
    const check: CheckOps = {
      ops: storeRules.map((rule) => ruleOp(scope, rule, dimensions, record, undefined, options.requestId)),
      vetoes: storeRules.map(vetoes),
      vetoed: limiterRulesOf.some((rule, i) => vetoes(rule) && !limiterDecisions[i]!.allowed),
    };
    const applied = storeRules.length > 0 ? await decide(check, now) : { results: [] };
    if (applied === undefined) {
      // Nothing decided or written by the store: judge apart, reusing the limiter's decisions.
      const known = new Map<RiskRule, WindowDecision>(limiterRulesOf.map((rule, i) => [rule, limiterDecisions[i]!]));
      return this.checkApart(scope, rules, dimensions, { ...options, requestId }, known);
    }
    const outcomesOf = (decisions: readonly WindowDecision[]) => {
      let li = 0;
      let si = 0;
      return rules.map((rule): Outcome => {
        if (rule.kind === 'window' && !inStore(rule)) return { decision: decisions[li++]! };
        return { result: applied.results[si++]! };
      });
    };
    const answer = this.answer(rules, outcomesOf(limiterDecisions), applied.degraded, record);
    if (!record) return answer;
    const settled = await this.settle(answer, limiterRulesOf, limiterDecisions, scope, dimensions, requestId);
    return settled === limiterDecisions ? answer : this.answer(rules, outcomesOf(settled), applied.degraded, record);
  }

  /** `known`: window rules the limiter decided already (with `options.requestId`). */
  private async checkApart(
    scope: string,
    rules: readonly RiskRule[],
    dimensions: Dimensions,
    options: RiskCheckOptions,
    known?: ReadonlyMap<RiskRule, Decision & { degraded?: FallbackMode }>,
  ): Promise<RiskDecision> {
    const record = options.record ?? true;
    const now = options.now;
    const requestId = options.requestId ?? this.newRequestId();
    const windowRules = rules.filter((rule): rule is WindowRiskRule => rule.kind === 'window');
    const eventRules = rules.filter((rule): rule is EventRiskRule => rule.kind !== 'window');
    const windowCalls = windowRules.map((rule) => known?.get(rule) ?? this.windowCheck(rule, scope, dimensions, record, requestId, now));
    const ops = eventRules.map((rule) => ruleOp(scope, rule, dimensions, record, undefined));
    const [windowDecisions, events] = await Promise.all([
      Promise.all(windowCalls),
      ops.length > 0 ? this.options.events.apply(ops, now) : Promise.resolve<AppliedEvents>({ results: [] }),
    ]);

    const outcomesOf = (decisions: readonly WindowDecision[]) => {
      let wi = 0;
      let ei = 0;
      return rules.map((rule): Outcome => (rule.kind === 'window' ? { decision: decisions[wi++]! } : { result: events.results[ei++]! }));
    };
    const answer = this.answer(rules, outcomesOf(windowDecisions), events.degraded, record);
    if (!record) return answer;
    const settled = await this.settle(answer, windowRules, windowDecisions, scope, dimensions, requestId);
    return settled === windowDecisions ? answer : this.answer(rules, outcomesOf(settled), events.degraded, record);
  }

  /**
   * After a recorded check is judged: a denied check's window admissions are taken back, then the
   * deferred bans of its limiter windows that were hit are asked for. Both awaited, though the
   * answer's verdict depends on neither: a later check must not count the denied one's admissions
   * (only a finished undo guarantees that on every connection: a cluster sends the subjects of one
   * check to several nodes), and a ban must see them gone. The one-call path writes no window
   * for a denied check, so undoes only its limiter windows. Returns the decisions, a new array
   * when a ban lengthened a `retryAfterMs`.
   */
  private async settle(
    answer: RiskDecision,
    rules: readonly WindowRiskRule[],
    decisions: readonly WindowDecision[],
    scope: string,
    dimensions: Dimensions,
    requestId: string,
  ): Promise<readonly WindowDecision[]> {
    if (answer.decision === 'deny') await this.undoWindows(rules, decisions, scope, dimensions, requestId);
    const hit = rules.flatMap((rule, i) => (rule.banMs > 0 && decisions[i]!.code === 'RATE_LIMITED' ? [i] : []));
    if (hit.length === 0) return decisions;
    // Let every check answered in this turn send its undos first, then wait for those of these subjects.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const settled = [...decisions];
    await Promise.all(
      hit.map(async (i) => {
        const rule = rules[i]!;
        const decision = decisions[i]!;
        const subject = ruleSubject(scope, rule, dimensions);
        await this.undosInFlight.landed(subject);
        const banned = await this.options.windows
          .banIfHit({
            subject,
            rules: limiterRules(rule, true),
            now: decision.at,
            ...(decision.degraded ? { degraded: decision.degraded } : {}),
          })
          // A ban that could not be asked is not set; the window's limit still holds.
          .catch(() => undefined);
        if (banned?.code === 'RATE_LIMITED' && banned.retryAfterMs > decision.retryAfterMs) {
          settled[i] = { ...decision, retryAfterMs: banned.retryAfterMs };
        }
      }),
    );
    return settled;
  }

  /** The answer from each rule's outcome, in rule order; `record`: a check (a BANNED check reports no count), else a look. */
  private answer(
    rules: readonly RiskRule[],
    outcomes: readonly Outcome[],
    eventsDegraded: FallbackMode | undefined,
    record: boolean,
  ): RiskDecision {
    const reasons: RiskReason[] = [];
    const verdicts: RiskVerdict[] = [];
    let degraded = eventsDegraded;
    rules.forEach((rule, i) => {
      const outcome = outcomes[i]!;
      let reason: KindReason<RiskReasonCode> | undefined;
      if ('decision' in outcome) {
        const { decision } = outcome;
        degraded ??= decision.degraded;
        if (!decision.allowed) {
          reason = {
            code: decision.code === 'BANNED' ? 'BANNED' : 'RATE_LIMITED',
            ...(decision.counts[0] === undefined ? {} : { count: decision.counts[0] }),
            limit: (rule as WindowRiskRule).limit,
            retryAfterMs: decision.retryAfterMs,
          };
        }
      } else if (outcome.result.fired) {
        reason = kindOf(rule).reason(rule, outcome.result, record);
      }
      verdicts.push(reason ? rule.effect : 'allow');
      if (reason) reasons.push({ rule: rule.name, kind: rule.kind, effect: rule.effect, ...reason, shadow: rule.mode === 'shadow' });
    });
    const enforced = reasons.filter((reason) => !reason.shadow);
    const decision: RiskVerdict = enforced.some((r) => r.effect === 'deny') ? 'deny' : enforced.length > 0 ? 'review' : 'allow';
    return { allowed: decision !== 'deny', decision, reasons, verdicts, ...(degraded ? { degraded } : {}) };
  }

  /**
   * Records an outcome without a decision: pushed to every last-n rule, and the event's values
   * added to distinct (while they fit the limit) and seen rules. Window rules count checks only.
   * The event feeds each of those rules whose dimensions (key and `of`) it carries; the others are
   * skipped and named in `skipped`, and an event that feeds none throws a `RiskRuleError`.
   * With a `requestId`, a repeat of it in the same scope within {@link EVENT_DEDUPE_MS} of the
   * first records nothing and answers `duplicate: true` (the id is claimed first, in its own
   * script call). A claim answered by the fallback is not trusted (in `deny` mode it would call
   * every event a repeat): the event is recorded. A claim whose record fails or degrades is
   * released, so a retry records in the store of record.
   */
  async record(
    scope: string,
    rules: readonly RiskRule[],
    dimensions: Dimensions,
    outcome: string,
    now?: number,
    requestId?: string,
  ): Promise<{ degraded?: FallbackMode; duplicate?: true; skipped?: string[] }> {
    // An event writes only to event rules (window rules count checks), each one it has the dimensions of.
    const { fed: eventRules, skipped } = eventRulesFed(
      rules.filter((rule): rule is EventRiskRule => kindOf(rule).recordsEvents),
      dimensions,
    );
    const named = skipped.length > 0 ? { skipped } : {};
    const claim = requestId === undefined ? undefined : `${scope}event:${requestId}`;
    let claimed = false;
    if (claim !== undefined) {
      const answer = await this.options.events.apply([{ kind: 'claim', subject: claim, ttlMs: EVENT_DEDUPE_MS }], now);
      if (!answer.degraded) {
        if (answer.results[0]!.fired) return { duplicate: true, ...named };
        claimed = true;
      }
    }
    const release = async () => {
      if (claimed) await this.options.events.apply([{ kind: 'claim', subject: claim!, ttlMs: 0 }], now).catch(() => undefined);
    };
    const ops = eventRules.map((rule) => ruleOp(scope, rule, dimensions, true, outcome));
    const applied = await this.options.events.apply(ops, now).catch(async (error: unknown) => {
      await release();
      throw error;
    });
    if (applied.degraded) await release();
    return applied.degraded ? { degraded: applied.degraded, ...named } : named;
  }

  /**
   * A request id for a check given none (for its undo): unique to this engine by its prefix. Not a
   * `randomUUID()`: V8 builds that string of many pieces, and kept in an in-process log each cost
   * about 550 bytes instead of 100 (measured).
   */
  private newRequestId(): string {
    return `${this.idPrefix}${(this.idCount++).toString(36)}`;
  }

  /** One window rule by the limiter: a check recorded under `requestId`, or a peek. */
  private windowCheck(
    rule: WindowRiskRule,
    scope: string,
    dimensions: Dimensions,
    record: boolean,
    requestId: string,
    now: number | undefined,
  ): Promise<Decision & { degraded?: FallbackMode }> {
    const subject = ruleSubject(scope, rule, dimensions);
    const at = now === undefined ? {} : { now };
    return record
      ? this.options.windows.check({ subject, rules: limiterRules(rule), requestId, ...at })
      : this.options.peek.peek({ subject, rules: limiterRules(rule, true), ...at });
  }

  /** Takes back a denied check's window admissions; a failure goes to `onUndoError`, never to the caller. */
  private async undoWindows(
    rules: readonly WindowRiskRule[],
    decisions: readonly WindowDecision[],
    scope: string,
    dimensions: Dimensions,
    requestId: string,
  ): Promise<void> {
    if (rules.length === 0) return;
    await Promise.all(
      rules.map((rule, i) => {
        const decision = decisions[i]!;
        if (!decision.allowed) return undefined;
        const subject = ruleSubject(scope, rule, dimensions);
        const undo = this.options.windows.undo({
          subject,
          rules: limiterRules(rule),
          requestId,
          at: decision.at,
          ...(decision.degraded ? { degraded: decision.degraded } : {}),
        });
        return rule.banMs > 0 ? this.undosInFlight.track(subject, undo) : undo;
      }),
    ).catch((error: unknown) => this.options.onUndoError?.(error));
  }
}

/** What decided one rule: the limiter, or the event store. */
type Outcome = { decision: WindowDecision } | { result: EventResult };

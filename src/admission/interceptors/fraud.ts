/**
 * SMS pumping protection (docs/fraud.md): the tenant's policy on each SMS, after the blacklist and
 * before frequency, so a refused send consumes nothing and a later refusal gives back what it took.
 * Rules in order: the destination's country (no call), the number prefix's velocity and the
 * conversion rate (the limiter: one batched round trip, a second only for a key at its
 * `minSends`), the month's spend cap (SQL, group-committed). In `monitor` mode every rule is
 * evaluated and counted as in `enforce`, and what it would have refused becomes a line on the
 * message instead of a refusal.
 */
import type { Channel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import { normalizePhone } from '../../core/recipients.js';
import type { CheckRequest, Decision, Rule } from '../../limiter/index.js';
import type { Interceptor } from '../chain.js';
import type { MessageFraud } from '../context.js';
import {
  type CompiledFraudPolicy,
  compileFraudPolicy,
  conversionLimit,
  countryAllowed,
  type FraudFlag,
  type FraudOutcome,
  type FraudRule,
  isSafe,
  NON_GEOGRAPHIC,
  nextMonthStart,
  prefixOf,
  priceMicros,
  utcMonth,
} from '../fraud-policy.js';
import type { FraudLimiter, FraudObserver, FraudPolicyLookup, SpendLedger } from '../ports.js';
import { fraudConversionSubject, fraudPrefixSubject, fraudTallySubject } from '../subjects.js';

export interface FraudDeps {
  policies: FraudPolicyLookup;
  limiter: FraudLimiter;
  spend: SpendLedger;
  observer?: FraudObserver;
}

/** The console's tallies: a fixed window per UTC day, counting without a log. */
export const TALLY_RULES: Rule[] = [{ windowMs: 86_400_000, limit: 1_000_000_000, algorithm: 'fixed-window' }];

// One rule array per (window, limit), so the limiter's normalisation cache hits; bounded.
const conversionRules = new Map<string, Rule[]>();
function rulesFor(windowMs: number, limit: number): Rule[] {
  const key = `${windowMs}:${limit}`;
  let rules = conversionRules.get(key);
  if (!rules) {
    if (conversionRules.size >= 4096) conversionRules.clear();
    rules = [{ windowMs, limit }];
    conversionRules.set(key, rules);
  }
  return rules;
}

/** The key a conversion rule counts a number under: its country, or its prefix. */
function conversionKey(policy: CompiledFraudPolicy, e164: string, region: string | undefined): string {
  const conversion = policy.conversion!;
  return conversion.by === 'country' ? (region ?? NON_GEOGRAPHIC) : prefixOf(e164, conversion.digits!);
}

/** A limiter admission the step holds: taken back by the undo, or when a later rule refuses. */
interface Admission {
  request: CheckRequest;
  decision: Decision & { degraded?: string };
}

/**
 * A refusal as the tenant sees it, and its `detail` for the operator. The tenant's error names the
 * rule kind (and `Retry-After`), never the policy's thresholds, counts, prefix or country: a
 * tenant that passes errors on to its users would teach a bot how to spread its walk. The detail
 * goes to the message's timeline (monitor mode's flags); the metrics and the console's tallies
 * count the rule.
 */
type Refusal = SluiceError & { detail: string };

const refuse = (
  code: FraudFlag['code'],
  message: string,
  detail: string,
  options: { retryAfterMs?: number; details: Record<string, unknown> },
): Refusal => Object.assign(new SluiceError(code, message, options), { detail });

const suspected = (rule: 'prefix' | 'conversion', message: string, detail: string, retryAfterMs: number) =>
  refuse('FRAUD_SUSPECTED', message, detail, { retryAfterMs, details: { rule } });

const DEGRADED = 'fraud protection is degraded and refuses sends until it recovers; retry later';
const PREFIX_REFUSAL = "too many SMS to numbers in this one's range (SMS pumping protection); retry after Retry-After";
const CONVERSION_REFUSAL = 'too few of the codes sent to this destination are confirmed (SMS pumping protection); retry after Retry-After';

/** One send's pass through the rules: what it holds (admissions, a charge) and what it reports. */
class Evaluation {
  readonly admissions: Admission[] = [];
  readonly flags: FraudFlag[] = [];
  readonly tallies: Promise<void>[] = [];
  charged: { month: string; costMicros: number } | undefined;

  constructor(
    private readonly deps: FraudDeps,
    readonly policy: CompiledFraudPolicy,
    readonly tenantId: string,
    readonly requestId: string,
  ) {}

  /** Reports one rule's decision: the metric, the console's tally and, in monitor mode, the message's line (the full detail). */
  decided(rule: FraudRule, refusal: Refusal | undefined): void {
    const { policy, deps } = this;
    const outcome: FraudOutcome = !refusal ? 'pass' : policy.enforce ? 'refuse' : 'would_refuse';
    deps.observer?.decided?.(rule, outcome, policy.mode);
    if (!refusal) return;
    if (!policy.enforce) this.flags.push({ rule, code: refusal.code as FraudFlag['code'], message: refusal.detail });
    this.tallies.push(
      deps.limiter.check({ subject: fraudTallySubject(this.tenantId, rule, outcome), rules: TALLY_RULES }).then(
        () => undefined,
        (error: unknown) => deps.observer?.tallyFailed?.(error),
      ),
    );
  }

  /** A limiter check the undo takes back when it admitted. */
  async check(subject: string, rules: Rule[]): Promise<Decision & { degraded?: string }> {
    const request: CheckRequest = { subject, rules, requestId: this.requestId };
    const decision = await this.deps.limiter.check(request);
    if (decision.allowed) this.admissions.push({ request, decision });
    return decision;
  }

  /** Gives back every admission and the charge: a later rule or step refused the send. */
  async undo(): Promise<void> {
    const { deps } = this;
    const undos: Promise<unknown>[] = this.admissions.splice(0).map(({ request, decision }) =>
      deps.limiter.undo({
        subject: request.subject,
        rules: request.rules,
        requestId: request.requestId!,
        at: decision.at,
        ...(decision.degraded ? { degraded: decision.degraded } : {}),
      }),
    );
    const charged = this.charged;
    this.charged = undefined;
    if (charged) undos.push(deps.spend.release(this.tenantId, charged.month, charged.costMicros));
    await Promise.all(undos);
  }
}

/**
 * Velocity and conversion, skipped for a safe number. Every prefix check, the conversion's check
 * at `minSends` and the peek of its confirmations leave in one event-loop turn (one batched
 * script call with Redis); only a key already holding `minSends` needs a second check, at the
 * limit its confirmations allow. Resolves the first refusal, after reporting each rule.
 */
async function velocityAndConversion(
  evaluation: Evaluation,
  deps: FraudDeps,
  number: string,
  region: string | undefined,
): Promise<Refusal | undefined> {
  const { policy, tenantId } = evaluation;
  if ((policy.prefixGroups.length === 0 && !policy.conversion) || isSafe(policy, number)) return undefined;
  const prefixes = Promise.all(
    policy.prefixGroups.map((group) => evaluation.check(fraudPrefixSubject(tenantId, prefixOf(number, group.digits)), group.rules)),
  );
  const conversion = policy.conversion;
  const key = conversion ? conversionKey(policy, number, region) : '';
  const sentSubject = fraudConversionSubject(tenantId, key, 'sent');
  const atMinSends = conversion && evaluation.check(sentSubject, conversion.baseRules);
  const confirmed =
    conversion &&
    deps.limiter.peek({ subject: fraudConversionSubject(tenantId, key, 'confirmed'), rules: conversion.countRules }).then(
      (decision) => decision.counts[0] ?? 0,
      // Without the confirmations the rate cannot be judged: the rule passes (docs/fraud.md, "Degraded").
      () => undefined,
    );

  let prefixRefusal: Refusal | undefined;
  if (policy.prefixGroups.length) {
    let retryAfterMs = 0;
    let first: { message: string; detail: string } | undefined;
    for (const [index, decision] of (await prefixes).entries()) {
      if (decision.allowed) continue;
      const group = policy.prefixGroups[index]!;
      const rule = decision.rule === undefined ? undefined : group.rules[decision.rule];
      retryAfterMs = Math.max(retryAfterMs, decision.retryAfterMs);
      first ??= rule
        ? {
            message: PREFIX_REFUSAL,
            detail: `at most ${rule.limit} SMS per ${rule.windowMs / 1000} s to one ${group.digits}-digit number prefix (+${prefixOf(number, group.digits)})`,
          }
        : { message: DEGRADED, detail: DEGRADED };
    }
    prefixRefusal = first && suspected('prefix', first.message, first.detail, retryAfterMs);
    evaluation.decided('prefix', prefixRefusal);
  }
  if (!conversion) return prefixRefusal;

  let decision = await atMinSends!;
  const count = await confirmed!;
  if (!decision.allowed && decision.rule !== undefined) {
    if (count === undefined) {
      evaluation.decided('conversion', undefined);
      return prefixRefusal;
    }
    const limit = conversionLimit(conversion, count);
    if (limit > conversion.minSends) decision = await evaluation.check(sentSubject, rulesFor(conversion.windowMs, limit));
  }
  let conversionRefusal: Refusal | undefined;
  if (!decision.allowed) {
    const sent = decision.counts[0];
    const what = conversion.by === 'country' ? `SMS to ${key}` : `SMS to the prefix +${key}`;
    conversionRefusal =
      decision.rule === undefined || sent === undefined
        ? suspected('conversion', DEGRADED, DEGRADED, decision.retryAfterMs)
        : suspected(
            'conversion',
            CONVERSION_REFUSAL,
            `${what}: ${count ?? 0} of ${sent} confirmed in ${conversion.windowSeconds} s, below the rate of ${conversion.minRate}`,
            decision.retryAfterMs,
          );
  }
  evaluation.decided('conversion', conversionRefusal);
  return prefixRefusal ?? conversionRefusal;
}

/** The month's spend: the estimated cost reserved against the cap, or the refusal. */
async function spend(evaluation: Evaluation, deps: FraudDeps, now: number, region: string | undefined): Promise<Refusal | undefined> {
  const { policy, tenantId } = evaluation;
  const prices = await deps.policies.prices();
  // The admin API keeps a cap and the prices in one currency, and a cap needs prices: a gap here is a hand-edited database.
  if (!prices || prices.currency !== policy.currency) return undefined;
  const costMicros = priceMicros(prices, region);
  const month = utcMonth(now);
  const cap = policy.spendCapMicros!;
  if (costMicros > 0 && !(await deps.spend.reserve(tenantId, month, costMicros, cap))) {
    // The tenant's own budget, no threshold of the pumping rules: its error keeps the cap.
    const message = `this SMS would take the tenant's estimated spend for ${month} past its cap of ${cap / 1e6} ${prices.currency}`;
    const refusal = refuse('SPEND_LIMIT_REACHED', message, message, {
      retryAfterMs: nextMonthStart(now) - now,
      details: { rule: 'spend', month, limit: cap / 1e6, currency: prices.currency },
    });
    evaluation.decided('spend', refusal);
    return refusal;
  }
  if (costMicros > 0) evaluation.charged = { month, costMicros };
  evaluation.decided('spend', undefined);
  return undefined;
}

/**
 * The `fraud` step. It reads the tenant's policy (live cache) on every SMS; without one it costs
 * that lookup alone.
 */
export function fraudInterceptor(deps: FraudDeps): Interceptor {
  return {
    name: 'fraud',
    async run(context) {
      const message = context.message!;
      if (message.channel !== 'sms') return undefined;
      const tenantId = context.tenant!.id;
      const stored = await deps.policies.policy(tenantId);
      if (!stored) return undefined;
      const policy = compileFraudPolicy(stored);
      const evaluation = new Evaluation(deps, policy, tenantId, context.id);
      const region = message.region;
      // In enforce mode the first refusal ends the evaluation; in monitor mode every rule runs.
      const ended = (refusal: Refusal | undefined) => refusal !== undefined && policy.enforce;
      let refusal: Refusal | undefined;
      try {
        if (policy.countries) {
          refusal = countryAllowed(policy, region)
            ? undefined
            : refuse(
                'DESTINATION_BLOCKED',
                "SMS to this destination is not allowed by the tenant's fraud policy",
                `SMS to ${region ?? 'non-geographic numbers'} is not allowed by the tenant's fraud policy`,
                { details: { rule: 'country' } },
              );
          evaluation.decided('country', refusal);
        }
        if (!ended(refusal)) refusal = (await velocityAndConversion(evaluation, deps, message.recipientKey, region)) ?? refusal;
        if (!ended(refusal) && policy.spendCapMicros !== undefined)
          refusal = (await spend(evaluation, deps, context.now, region)) ?? refusal;
      } catch (error) {
        await evaluation.undo();
        await Promise.all(evaluation.tallies);
        throw error;
      }
      await Promise.all(evaluation.tallies);
      if (ended(refusal)) {
        await evaluation.undo();
        throw refusal;
      }
      const fraud: MessageFraud = {
        ...(evaluation.charged ? { costMicros: evaluation.charged.costMicros } : {}),
        ...(evaluation.flags.length ? { flags: evaluation.flags } : {}),
      };
      if (fraud.costMicros !== undefined || fraud.flags) message.fraud = fraud;
      return evaluation.admissions.length || evaluation.charged ? () => evaluation.undo() : undefined;
    },
  };
}

/** What {@link releaseFraudCounts} and {@link recordConfirmation} need of a stored message. */
export interface FraudMessage {
  id: string;
  tenantId: string;
  channel: Channel;
  recipient: string;
  createdAt: number;
  /** When its tenant confirmed it (feedback); null or absent: not confirmed. */
  confirmedAt?: number | null;
}

/**
 * Gives a canceled message's velocity and conversion sends back, and its confirmation with its
 * send: a confirmation without the send it belongs to would raise its key's rate for sends that
 * nobody confirms (undo by its id, with the tenant's current policy: a no-op where it was not
 * counted). Its spend goes back with the cancel's own statement (`SmsSpendRepository.refund`).
 */
export async function releaseFraudCounts(deps: Pick<FraudDeps, 'policies' | 'limiter'>, message: FraudMessage): Promise<void> {
  if (message.channel !== 'sms') return;
  const stored = await deps.policies.policy(message.tenantId);
  if (!stored) return;
  const policy = compileFraudPolicy(stored);
  const phone = normalizePhone(message.recipient, undefined);
  if (!phone.ok || isSafe(policy, phone.key)) return;
  const undo = (subject: string, rules: Rule[], at = message.createdAt) => deps.limiter.undo({ subject, rules, requestId: message.id, at });
  const conversion = policy.conversion;
  const key = conversion && conversionKey(policy, phone.key, phone.region);
  await Promise.all([
    ...policy.prefixGroups.map((group) => undo(fraudPrefixSubject(message.tenantId, prefixOf(phone.key, group.digits)), group.rules)),
    ...(conversion && key !== undefined
      ? [
          undo(fraudConversionSubject(message.tenantId, key, 'sent'), conversion.baseRules),
          message.confirmedAt == null
            ? undefined
            : undo(fraudConversionSubject(message.tenantId, key, 'confirmed'), conversion.countRules, message.confirmedAt),
        ]
      : []),
  ]);
}

/**
 * Counts a confirmed message as one conversion of its key (country or prefix), when the tenant's
 * policy has a conversion rule and the message was sent within its window: a confirmation counts
 * beside the sends it can belong to. Idempotent: the message id is the request id.
 */
export async function recordConfirmation(deps: Pick<FraudDeps, 'policies' | 'limiter'>, message: FraudMessage, now: number): Promise<void> {
  if (message.channel !== 'sms') return;
  const stored = await deps.policies.policy(message.tenantId);
  if (!stored) return;
  const policy = compileFraudPolicy(stored);
  if (!policy.conversion || message.createdAt <= now - policy.conversion.windowMs) return;
  const phone = normalizePhone(message.recipient, undefined);
  if (!phone.ok || isSafe(policy, phone.key)) return;
  const subject = fraudConversionSubject(message.tenantId, conversionKey(policy, phone.key, phone.region), 'confirmed');
  await deps.limiter.check({ subject, rules: policy.conversion.countRules, requestId: message.id });
}

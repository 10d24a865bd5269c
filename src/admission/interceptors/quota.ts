import { isChannel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import type { CheckRequest, Decision, Rule, UndoRequest } from '../../limiter/index.js';
import type { Interceptor, Undo } from '../chain.js';
import type { TenantDirectory } from '../ports.js';
import { dailyQuotaSubject, tenantQpsSubject } from '../subjects.js';

const DAY_MS = 86_400_000;

// One rule array per limit value, so the limiter's normalisation cache hits.
const qpsRules = new Map<number, Rule[]>();

/**
 * The rules of {@link tenantQpsSubject} for a tenant's `qpsLimit`: a token bucket of a second,
 * leased (spent from blocks leased from Redis when the limiter has leases; exact otherwise).
 */
export function tenantQpsRules(qpsLimit: number): Rule[] {
  let rules = qpsRules.get(qpsLimit);
  if (!rules) {
    rules = [{ windowMs: 1000, limit: qpsLimit, algorithm: 'token-bucket', lease: true }];
    qpsRules.set(qpsLimit, rules);
  }
  return rules;
}

/** The refusal of a used-up quota, `what` naming it ("requests per second"). */
export function quotaExceeded(what: string, retryAfterMs: number): SluiceError {
  return new SluiceError('QUOTA_EXCEEDED', `the tenant's ${what} is used up`, { retryAfterMs, details: { quota: what } });
}

/**
 * What counts quotas: a Limiter, or the DegradingLimiter (so quotas, like recipient rules, go on
 * in the fallback while Redis is away). `degraded` tells the undo which store decided.
 */
export interface QuotaCounter {
  check(request: CheckRequest): Promise<Decision & { degraded?: string }>;
  undo(request: UndoRequest & { degraded?: string }): Promise<unknown>;
}

/**
 * Tenant quotas: requests per second (token bucket, any channel) and admitted messages per UTC day
 * per channel (fixed window aligned to midnight UTC, as a daily quota is read by people).
 * Runs before validation (DESIGN.md §4); a later rejection gives the quota back through the undo.
 */
export function quotaInterceptor(directory: TenantDirectory, limiter: QuotaCounter): Interceptor {
  // One rule array per limit value, so the limiter's normalisation cache hits.
  const dailyRules = new Map<number, Rule[]>();
  const rulesFor = (cache: Map<number, Rule[]>, limit: number, make: (limit: number) => Rule) => {
    let rules = cache.get(limit);
    if (!rules) {
      rules = [make(limit)];
      cache.set(limit, rules);
    }
    return rules;
  };

  return {
    name: 'quota',
    async run(context) {
      const tenant = context.tenant!;
      // Unknown channels are rejected by validation, after this step.
      const channel = context.request.channel;
      const dailyLimit = isChannel(channel) ? (await directory.channelPolicy(tenant.id, channel)).dailyLimit : null;
      // No quota set: nothing to count, and nothing made per message to count it.
      if (!tenant.qpsLimit && dailyLimit === null) return undefined;
      const undos: Undo[] = [];
      const take = async (subject: string, rules: Rule[], what: string) => {
        // No request id: quotas need no per-attempt log (a daily quota would keep one id per send);
        // the undo takes the count back anonymously. No `now`: the store's clock (Redis TIME) decides.
        const decision = await limiter.check({ subject, rules });
        if (!decision.allowed) throw quotaExceeded(what, decision.retryAfterMs);
        const { degraded } = decision;
        undos.push(() => limiter.undo({ subject, rules, at: decision.at, ...(degraded ? { degraded } : {}) }).then(() => undefined));
      };
      const undoAll: Undo = async () => {
        for (const undo of undos.reverse()) await undo();
      };
      try {
        if (tenant.qpsLimit) await take(tenantQpsSubject(tenant.id), tenantQpsRules(tenant.qpsLimit), 'requests per second');
        if (dailyLimit !== null) {
          const rules = rulesFor(dailyRules, dailyLimit, (limit) => ({ windowMs: DAY_MS, limit, algorithm: 'fixed-window' }));
          await take(dailyQuotaSubject(tenant.id, channel), rules, `daily ${channel} quota`);
        }
      } catch (error) {
        await undoAll();
        throw error;
      }
      return undos.length ? undoAll : undefined;
    },
  };
}

/**
 * SMS pumping protection's administration (contract: `FraudAdminService`): a tenant's policy, the
 * SMS prices, and what the protection did (the month's spend, today's refusals). A change is live
 * on every instance within a second. A cap and the prices always share one currency: a policy
 * whose cap names another is refused, and so are prices in a currency some tenant's cap does not use.
 */
import { checkFraudPolicy, checkSmsPrices, FRAUD_RULES, type SmsPrices, utcMonth } from '../admission/fraud-policy.js';
import { TALLY_RULES } from '../admission/interceptors/fraud.js';
import { type StoredShapes, storedRow } from '../admission/stored-shapes.js';
import { fraudTallySubject } from '../admission/subjects.js';
import { SluiceError, unavailableUnlessSluiceError } from '../core/errors.js';
import type { Clock, Limiter } from '../limiter/index.js';
import type { FraudRepository } from '../storage/repositories/fraud.js';
import type { SmsSpendRepository } from '../storage/repositories/sms-spend.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { FraudAdminService } from './contracts.js';
import { requireTenant } from './tenant-administration.js';
import type { FraudPolicyView, FraudStatusView, FraudTallyView, SmsPricesView } from './views.js';

export interface FraudAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  fraud: FraudRepository;
  spend: Pick<SmsSpendRepository, 'spent'>;
  /** The live limiter, for peeks at the tallies (no fallback: with Redis away the status is a 503). */
  limiter: Pick<Limiter, 'peek'>;
  clock: Clock;
  /** Drop every instance's copy after a change. */
  invalidatePolicy(tenantId: string): Promise<void>;
  invalidatePrices(): Promise<void>;
  /** The checks of the stored policies and prices. */
  shapes: Pick<StoredShapes, 'fraudPolicy' | 'smsPrices'>;
}

const TALLIED = FRAUD_RULES.flatMap((rule) => (['refuse', 'would_refuse'] as const).map((outcome) => ({ rule, outcome })));

export class FraudAdministration implements FraudAdminService {
  constructor(private readonly deps: FraudAdministrationDeps) {}

  async setPolicy(tenantId: string, input: Omit<FraudPolicyView, 'mode'> & { mode?: FraudPolicyView['mode'] }): Promise<FraudPolicyView> {
    const policy = checkFraudPolicy(input);
    await requireTenant(this.deps.tenants, tenantId).catch(unavailableUnlessSluiceError);
    if (policy.monthlySpend) {
      const prices = await this.prices();
      if (!prices) {
        throw new SluiceError('INVALID_REQUEST', 'a spend cap needs the SMS prices: PUT /v1/admin/prices/sms first', {
          details: { field: 'monthlySpend' },
        });
      }
      if (prices.currency !== policy.monthlySpend.currency) {
        throw new SluiceError('INVALID_REQUEST', `the SMS prices are in ${prices.currency}: a cap must be too`, {
          details: { field: 'monthlySpend.currency' },
        });
      }
    }
    await this.deps.fraud.setPolicy(tenantId, 'sms', policy).catch(unavailableUnlessSluiceError);
    await this.deps.invalidatePolicy(tenantId);
    return policy;
  }

  async getPolicy(tenantId: string): Promise<FraudPolicyView> {
    await requireTenant(this.deps.tenants, tenantId).catch(unavailableUnlessSluiceError);
    const found = await this.deps.fraud.getPolicy(tenantId, 'sms').catch(unavailableUnlessSluiceError);
    if (!found) throw new SluiceError('NOT_FOUND', 'the tenant has no SMS fraud policy');
    return this.deps.shapes.fraudPolicy.read(storedRow.fraudPolicy(tenantId, 'sms'), found.spec);
  }

  async setPrices(input: SmsPricesView): Promise<SmsPricesView> {
    const prices = checkSmsPrices(input);
    const policies = await this.deps.fraud.listPolicies('sms').catch(unavailableUnlessSluiceError);
    const others = policies.filter(({ tenantId, spec }) => {
      const cap = this.deps.shapes.fraudPolicy.read(storedRow.fraudPolicy(tenantId, 'sms'), spec).monthlySpend;
      return cap !== undefined && cap.currency !== prices.currency;
    });
    if (others.length > 0) {
      const named = others
        .slice(0, 5)
        .map(({ tenantId }) => tenantId)
        .join(', ');
      throw new SluiceError(
        'CONFLICT',
        `${others.length} tenant${others.length === 1 ? "'s spend cap is" : "s' spend caps are"} in another currency (${named}${others.length > 5 ? ', …' : ''}): change ${others.length === 1 ? 'it' : 'them'} first`,
        { details: { field: 'currency' } },
      );
    }
    await this.deps.fraud.setPrices('sms', prices).catch(unavailableUnlessSluiceError);
    await this.deps.invalidatePrices();
    return prices;
  }

  async getPrices(): Promise<SmsPricesView> {
    const prices = await this.prices();
    if (!prices) throw new SluiceError('NOT_FOUND', 'no SMS prices are set');
    return prices;
  }

  async status(tenantId: string): Promise<FraudStatusView> {
    const policy = await this.getPolicy(tenantId);
    const now = this.deps.clock.now();
    const month = utcMonth(now);
    const [spent, today] = await Promise.all([
      this.deps.spend.spent(tenantId, month),
      Promise.all(
        TALLIED.map(
          async ({ rule, outcome }): Promise<FraudTallyView> => ({
            rule,
            outcome,
            count: (await this.deps.limiter.peek({ subject: fraudTallySubject(tenantId, rule, outcome), rules: TALLY_RULES })).counts[0]!,
          }),
        ),
      ),
    ]).catch(unavailableUnlessSluiceError);
    return {
      mode: policy.mode,
      month,
      spend: { spent: spent / 1e6, limit: policy.monthlySpend?.limit ?? null, currency: policy.monthlySpend?.currency ?? null },
      day: new Date(now).toISOString().slice(0, 10),
      today,
    };
  }

  private async prices(): Promise<SmsPrices | undefined> {
    const found = await this.deps.fraud.getPrices('sms').catch(unavailableUnlessSluiceError);
    return found && this.deps.shapes.smsPrices.read(storedRow.prices('sms'), found.spec);
  }
}

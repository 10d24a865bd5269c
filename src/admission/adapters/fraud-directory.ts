/**
 * SMS pumping protection's configuration as admission reads it, through the live cache (local →
 * Redis → SQL): a tenant's policy by tenant id, the SMS prices under `sms`. An admin change
 * invalidates its key on every instance, so it is live within a second. And the spend ledger
 * over its SQL repository, on the chain's clock.
 */
import type { LiveCache } from '../../infra/live-cache.js';
import type { Clock } from '../../limiter/index.js';
import type { FraudRepository } from '../../storage/repositories/fraud.js';
import type { SmsSpendRepository } from '../../storage/repositories/sms-spend.js';
import type { FraudPolicy, SmsPrices } from '../fraud-policy.js';
import type { FraudPolicyLookup, SpendLedger } from '../ports.js';
import { type StoredShapes, storedRow } from '../stored-shapes.js';

/** The policy cache's loader: the tenant's SMS policy from SQL, checked (`shapes`). */
export async function loadFraudPolicy(
  fraud: FraudRepository,
  shapes: Pick<StoredShapes, 'fraudPolicy'>,
  tenantId: string,
): Promise<FraudPolicy | undefined> {
  const found = await fraud.getPolicy(tenantId, 'sms');
  return found && shapes.fraudPolicy.read(storedRow.fraudPolicy(tenantId, 'sms'), found.spec);
}

/** The prices cache's loader: a channel's prices (`sms`) from SQL, checked (`shapes`). */
export async function loadPrices(
  fraud: FraudRepository,
  shapes: Pick<StoredShapes, 'smsPrices'>,
  channel: string,
): Promise<SmsPrices | undefined> {
  const found = await fraud.getPrices(channel as 'sms');
  return found && shapes.smsPrices.read(storedRow.prices(channel), found.spec);
}

export class CachedFraudPolicies implements FraudPolicyLookup {
  constructor(
    private readonly policies: LiveCache<FraudPolicy>,
    private readonly smsPrices: LiveCache<SmsPrices>,
  ) {}

  policy(tenantId: string): Promise<FraudPolicy | undefined> {
    return this.policies.get(tenantId);
  }

  prices(): Promise<SmsPrices | undefined> {
    return this.smsPrices.get('sms');
  }

  /** After a PUT of a tenant's policy: every instance drops its copy. */
  invalidatePolicy(tenantId: string): Promise<void> {
    return this.policies.invalidate(tenantId);
  }

  /** After a PUT of the prices. */
  invalidatePrices(): Promise<void> {
    return this.smsPrices.invalidate('sms');
  }

  async close(): Promise<void> {
    await Promise.all([this.policies.close(), this.smsPrices.close()]);
  }
}

/** The chain's spend ledger: the SQL repository, each change stamped with the clock. */
export class SqlSpendLedger implements SpendLedger {
  constructor(
    private readonly spend: SmsSpendRepository,
    private readonly clock: Clock,
  ) {}

  reserve(tenantId: string, month: string, costMicros: number, capMicros: number): Promise<boolean> {
    return this.spend.reserve(tenantId, month, costMicros, capMicros, this.clock.now());
  }

  release(tenantId: string, month: string, costMicros: number): Promise<void> {
    return this.spend.release(tenantId, month, costMicros, this.clock.now());
  }
}

/**
 * Lifting a recipient's ban on a tenant channel, for the admin API and the CLI (contract:
 * `BanAdminService`); a ban's status is a lookup (`admin-lookup-service.ts`).
 */
import { frequencySubject } from '../admission/interceptors/frequency.js';
import type { Channel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import { normalizeRecipient } from '../core/recipients.js';
import type { Limiter } from '../limiter/index.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { BanAdminService } from './contracts.js';
import { requireTenant } from './tenant-administration.js';

export interface BanAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  /** The limiter holding recipients' bans. */
  limiter: Pick<Limiter, 'unban' | 'reset'>;
  defaultRegion: string;
}

export class BanAdministration implements BanAdminService {
  constructor(private readonly deps: BanAdministrationDeps) {}

  async liftBan(tenantId: string, channel: Channel, to: string, options: { resetCounts?: boolean } = {}): Promise<boolean> {
    await requireTenant(this.deps.tenants, tenantId);
    const normalized = normalizeRecipient(channel, to, this.deps.defaultRegion);
    if (!normalized.ok) throw new SluiceError('INVALID_REQUEST', normalized.reason, { details: { field: 'to' } });
    const subject = frequencySubject(tenantId, channel, normalized.key);
    const lifted = await this.deps.limiter.unban(subject);
    if (options.resetCounts) await this.deps.limiter.reset(subject);
    return lifted;
  }
}

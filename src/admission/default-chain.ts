import type { Decision } from '../limiter/index.js';
import { AdmissionChain, type ChainObserver } from './chain.js';
import { authInterceptor } from './interceptors/auth.js';
import { blacklistInterceptor } from './interceptors/blacklist.js';
import { frequencyInterceptor } from './interceptors/frequency.js';
import { idempotencyInterceptor } from './interceptors/idempotency.js';
import { persistInterceptor } from './interceptors/persist.js';
import { type QuotaCounter, quotaInterceptor } from './interceptors/quota.js';
import { tenantStatusInterceptor } from './interceptors/tenant-status.js';
import { type ValidationOptions, validationInterceptor } from './interceptors/validation.js';
import type { BlacklistLookup, FrequencyGate, IdempotencyGuard, MessageWriter, TenantDirectory } from './ports.js';

export interface DefaultChainDeps {
  directory: TenantDirectory;
  blacklist: BlacklistLookup;
  messages: MessageWriter;
  /** Serialises concurrent attempts under one Idempotency-Key. */
  idempotency: IdempotencyGuard;
  /** Counts tenant quotas (QPS, daily). */
  quotaLimiter: QuotaCounter;
  frequency: FrequencyGate;
  validation: ValidationOptions;
  observer?: ChainObserver;
  /** Told every frequency decision (metrics). */
  onDecision?: (channel: string, decision: Decision) => void;
}

/**
 * auth → tenant status → idempotency → quota → validation → blacklist → frequency → persist.
 * Idempotency sits before the consuming steps so a replay consumes nothing.
 */
export function defaultChain(deps: DefaultChainDeps): AdmissionChain {
  return new AdmissionChain(
    [
      authInterceptor(deps.directory),
      tenantStatusInterceptor(),
      idempotencyInterceptor(deps.messages, deps.idempotency),
      quotaInterceptor(deps.directory, deps.quotaLimiter),
      validationInterceptor(deps.validation),
      blacklistInterceptor(deps.blacklist),
      frequencyInterceptor(deps.directory, deps.frequency, deps.onDecision),
      persistInterceptor(deps.messages),
    ],
    deps.observer,
  );
}

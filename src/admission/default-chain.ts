import type { Decision } from '../limiter/index.js';
import { AdmissionChain, type ChainObserver } from './chain.js';
import { authInterceptor } from './interceptors/auth.js';
import { blacklistInterceptor } from './interceptors/blacklist.js';
import { type FraudDeps, fraudInterceptor } from './interceptors/fraud.js';
import { frequencyInterceptor } from './interceptors/frequency.js';
import { idempotencyInterceptor } from './interceptors/idempotency.js';
import { persistInterceptor } from './interceptors/persist.js';
import { quietHoursInterceptor } from './interceptors/quiet-hours.js';
import { type QuotaCounter, quotaInterceptor } from './interceptors/quota.js';
import { suppressionInterceptor } from './interceptors/suppression.js';
import { templateInterceptor } from './interceptors/template.js';
import { tenantStatusInterceptor } from './interceptors/tenant-status.js';
import { type ValidationOptions, validationInterceptor } from './interceptors/validation.js';
import type {
  BlacklistLookup,
  FrequencyGate,
  IdempotencyGuard,
  MessageWriter,
  QuietHoursLookup,
  SuppressionLookup,
  TemplateLookup,
  TenantDirectory,
} from './ports.js';

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
  /** Stored templates: a `template` step before quota (a send with bad params consumes nothing). */
  templates?: TemplateLookup;
  /** Quiet hours: a `quiet-hours` step after validation, before frequency. */
  quietHours?: QuietHoursLookup;
  /** SMS pumping protection: a `fraud` step just before frequency (docs/fraud.md). */
  fraud?: FraudDeps;
  /** The recipient's word (docs/compliance.md): a `suppression` step after blacklist, before everything that consumes. */
  suppressions?: SuppressionLookup;
}

/**
 * auth → tenant status → idempotency → [template] → quota → validation → blacklist →
 * [suppression] → [quiet-hours] → [fraud] → frequency → persist. Idempotency sits before the consuming steps so a replay
 * consumes nothing.
 */
export function defaultChain(deps: DefaultChainDeps): AdmissionChain {
  let chain = new AdmissionChain(
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
  if (deps.templates) chain = chain.with(templateInterceptor(deps.templates), 'quota');
  if (deps.suppressions) chain = chain.with(suppressionInterceptor(deps.suppressions), 'frequency');
  if (deps.quietHours) chain = chain.with(quietHoursInterceptor(deps.quietHours), 'frequency');
  if (deps.fraud) chain = chain.with(fraudInterceptor(deps.fraud), 'frequency');
  return chain;
}

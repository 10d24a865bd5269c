/**
 * Every limiter subject sluice writes, and whose it is. Recipient subjects start with the tenant
 * id (`<tenant>:<channel>:<recipient>`, built by `frequencySubject`); quota, risk and fraud
 * subjects with their kind, then the tenant id. Tenant ids hold no `:` (ULIDs).
 */

/** The tenant's requests-per-second bucket: its sends and its risk checks draw from the same one. */
export const tenantQpsSubject = (tenantId: string): string => `quota:${tenantId}:qps`;

/** The tenant's admitted messages per UTC day on a channel. */
export const dailyQuotaSubject = (tenantId: string, channel: string): string => `quota:${tenantId}:${channel}:day`;

/** A risk check's subject. The action's length first: `a` + `b:c` and `a:b` + `c` are different subjects. */
export const riskSubject = (tenantId: string, action: string, subject: string): string =>
  `risk:${tenantId}:${action.length}:${action}:${subject}`;

/** SMS pumping protection: the sends to one number prefix (its digits, country code included), counted by its velocity rules. */
export const fraudPrefixSubject = (tenantId: string, prefix: string): string => `fraud:${tenantId}:p:${prefix}`;

/**
 * SMS pumping protection: the sends (`s`) and confirmations (`k`) of one conversion key, a country
 * (`GB`, letters) or a prefix (digits), so the two kinds of key never meet.
 */
export const fraudConversionSubject = (tenantId: string, key: string, what: 'sent' | 'confirmed'): string =>
  `fraud:${tenantId}:c:${key}:${what === 'sent' ? 's' : 'k'}`;

/** SMS pumping protection: the day's refusals (or would-be refusals) of one rule, for the console. */
export const fraudTallySubject = (tenantId: string, rule: string, outcome: string): string => `fraud:${tenantId}:t:${rule}:${outcome}`;

const KIND_HEADS = new Set(['quota', 'risk', 'fraud']);

/** The tenant a subject belongs to: the in-process limiter evicts fairly between tenants. */
export function subjectTenant(subject: string): string {
  const first = subject.indexOf(':');
  const head = first < 0 ? subject : subject.slice(0, first);
  if (!KIND_HEADS.has(head)) return head;
  const second = subject.indexOf(':', first + 1);
  return second < 0 ? subject.slice(first + 1) : subject.slice(first + 1, second);
}

/** Quota buckets are never evicted: a tenant must not reset its own quota by flooding the limiter with other subjects. */
export const isQuotaSubject = (subject: string): boolean => subject.startsWith('quota:');

/** Risk subjects: their request ids are the tenant's own, which a client may retry. */
export const isRiskSubject = (subject: string): boolean => subject.startsWith('risk:');

/**
 * Every limiter subject sluice writes, and whose it is. Recipient subjects start with the tenant
 * id (`<tenant>:<channel>:<recipient>`, built by `frequencySubject`); quota and risk subjects with
 * their kind, then the tenant id. Tenant ids hold no `:` (ULIDs).
 */

/** The tenant's requests-per-second bucket: its sends and its risk checks draw from the same one. */
export const tenantQpsSubject = (tenantId: string): string => `quota:${tenantId}:qps`;

/** The tenant's admitted messages per UTC day on a channel. */
export const dailyQuotaSubject = (tenantId: string, channel: string): string => `quota:${tenantId}:${channel}:day`;

/** A risk check's subject. The action's length first: `a` + `b:c` and `a:b` + `c` are different subjects. */
export const riskSubject = (tenantId: string, action: string, subject: string): string =>
  `risk:${tenantId}:${action.length}:${action}:${subject}`;

/** The tenant a subject belongs to: the in-process limiter evicts fairly between tenants. */
export function subjectTenant(subject: string): string {
  const first = subject.indexOf(':');
  const head = first < 0 ? subject : subject.slice(0, first);
  if (head !== 'quota' && head !== 'risk') return head;
  const second = subject.indexOf(':', first + 1);
  return second < 0 ? subject.slice(first + 1) : subject.slice(first + 1, second);
}

/** Quota buckets are never evicted: a tenant must not reset its own quota by flooding the limiter with other subjects. */
export const isQuotaSubject = (subject: string): boolean => subject.startsWith('quota:');

/** Risk subjects: their request ids are the tenant's own, which a client may retry. */
export const isRiskSubject = (subject: string): boolean => subject.startsWith('risk:');

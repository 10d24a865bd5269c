import { describe, expect, it } from 'vitest';
import { frequencySubject } from '../../src/admission/interceptors/frequency.js';
import {
  dailyQuotaSubject,
  fraudConversionSubject,
  fraudPrefixSubject,
  fraudTallySubject,
  isQuotaSubject,
  riskSubject,
  subjectTenant,
  tenantQpsSubject,
} from '../../src/admission/subjects.js';

describe('limiter subjects', () => {
  it('name their tenant, whatever the rest holds', () => {
    const tenant = '01M8S0KHH7J876MCYAQW6WDW7P';
    for (const subject of [
      frequencySubject(tenant, 'webhook', 'https://x.example/a:b'),
      tenantQpsSubject(tenant),
      dailyQuotaSubject(tenant, 'sms'),
      riskSubject(tenant, 'a:b', 'quota:other'),
      fraudPrefixSubject(tenant, '447911'),
      fraudConversionSubject(tenant, 'GB', 'sent'),
      fraudTallySubject(tenant, 'prefix', 'refuse'),
    ]) {
      expect(subjectTenant(subject)).toBe(tenant);
    }
  });

  it('quota buckets, and only they, are quota subjects', () => {
    expect(isQuotaSubject(tenantQpsSubject('t'))).toBe(true);
    expect(isQuotaSubject(dailyQuotaSubject('t', 'sms'))).toBe(true);
    expect(isQuotaSubject(riskSubject('t', 'quota', 'x'))).toBe(false);
    expect(isQuotaSubject(frequencySubject('t', 'sms', '+8613800138000'))).toBe(false);
  });
});

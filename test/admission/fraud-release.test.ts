/**
 * A canceled SMS gives back what it counted in the fraud rules, its confirmation included: a
 * confirmation left behind without its send would raise its key's conversion rate for sends that
 * nobody confirms (issue 33). The in-process limiter and clock; the policy from a plain lookup.
 */
import { describe, expect, it } from 'vitest';
import { type FraudMessage, recordConfirmation, releaseFraudCounts } from '../../src/admission/interceptors/fraud.js';
import { fraudConversionSubject } from '../../src/admission/subjects.js';
import { ManualClock } from '../../src/limiter/clock.js';
import { Limiter, MemoryStore } from '../../src/limiter/index.js';

const WINDOW_MS = 3_600_000;
const clock = new ManualClock(1_700_000_000_000);
const limiter = new Limiter({ store: new MemoryStore({ clock }) });
const deps = {
  limiter,
  policies: {
    policy: async () => ({
      mode: 'enforce' as const,
      conversion: { windowSeconds: WINDOW_MS / 1000, minSends: 5, minRate: 0.5, by: 'country' as const },
    }),
    prices: async () => undefined,
  },
};
const confirmations = async (tenantId: string) =>
  (
    await limiter.peek({
      subject: fraudConversionSubject(tenantId, 'GB', 'confirmed'),
      rules: [{ windowMs: WINDOW_MS, limit: 1_000_000_000 }],
    })
  ).counts[0];

describe('releaseFraudCounts', () => {
  it('takes back a confirmation with the send, once; a message never confirmed takes none', async () => {
    const message: FraudMessage = { id: 'm1', tenantId: 't1', channel: 'sms', recipient: '+447400123001', createdAt: clock.now() };
    const other: FraudMessage = { ...message, id: 'm2' };
    clock.advance(1000);
    await recordConfirmation(deps, message, clock.now());
    await recordConfirmation(deps, other, clock.now());
    expect(await confirmations('t1')).toBe(2);
    await releaseFraudCounts(deps, { ...message, confirmedAt: clock.now() });
    expect(await confirmations('t1')).toBe(1);
    await releaseFraudCounts(deps, { ...message, confirmedAt: clock.now() });
    await releaseFraudCounts(deps, { ...other, confirmedAt: null });
    expect(await confirmations('t1')).toBe(1);
  });
});

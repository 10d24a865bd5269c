/**
 * One racing process of fraud-race.int.test.ts: the `fraud` step of the admission chain over a
 * Limiter on the shared Redis, as every sluice instance runs it. It connects, prints `ready`,
 * waits for `go`, then runs `<ops>` sends at once, each to its own number of one range
 * (`+447400123…`: one 8-digit prefix), and prints `{"passed": n, "refused": m}`.
 *
 * Usage: node --import tsx fraud-race-child.ts <redis-url> <prefix> <tenant> <ops> <child id>
 */
import type { AdmissionContext } from '../../src/admission/context.js';
import type { FraudPolicy } from '../../src/admission/fraud-policy.js';
import { fraudInterceptor } from '../../src/admission/interceptors/fraud.js';
import { SluiceError } from '../../src/core/errors.js';
import { Limiter, RedisStore } from '../../src/limiter/index.js';
import { readyThenGo, redisFromArgument } from '../support/race-child.js';

const [target, prefix, tenant, ops, id] = process.argv.slice(2);
if (!target || !prefix || !tenant || !ops || !id) {
  console.error('usage: fraud-race-child.ts <redis-url> <prefix> <tenant> <ops> <child id>');
  process.exit(2);
}
const RACE_POLICY: FraudPolicy = { mode: 'enforce', prefixes: [{ digits: 8, windowSeconds: 3600, limit: 30 }] };
const client = redisFromArgument(target);
const limiter = new Limiter({ store: new RedisStore({ client, prefix, keySecret: 'race' }) });
const step = fraudInterceptor({
  policies: { policy: async () => RACE_POLICY, prices: async () => undefined },
  limiter,
  // The policy has no cap: nothing is ever reserved.
  spend: {
    reserve: () => Promise.reject(new Error('no cap: not called')),
    release: () => Promise.reject(new Error('no cap: not called')),
  },
});
const context = (i: number): AdmissionContext => {
  const number = `+447400123${String(Number(id) * Number(ops) + i).padStart(3, '0')}`;
  return {
    id: `race-${id}-${i}`,
    now: Date.now(),
    apiKey: undefined,
    idempotencyKey: undefined,
    requestHash: undefined,
    request: { channel: 'sms', to: number, body: 'code' },
    tenant: { id: tenant, name: 'race', status: 'active', qpsLimit: null },
    message: {
      channel: 'sms',
      recipient: number,
      recipientKey: number,
      region: 'GB',
      payload: { body: 'code' },
      priority: 'transactional',
      dueAt: Date.now(),
      scheduled: false,
    },
  };
};

// Warm the connection and the script, on a prefix of another tenant.
await limiter.peek({ subject: `warm:${id}`, rules: [{ windowMs: 1000, limit: 1 }] });
await readyThenGo();
const results = await Promise.all(
  Array.from({ length: Number(ops) }, (_, i) =>
    Promise.resolve(step.run(context(i))).then(
      () => true,
      (error: unknown) => {
        if (error instanceof SluiceError && error.code === 'FRAUD_SUSPECTED') return false;
        throw error;
      },
    ),
  ),
);
const passed = results.filter(Boolean).length;
console.log(JSON.stringify({ passed, refused: results.length - passed }));
client.disconnect();

/**
 * One process of lease-race.int.test.ts: connects, prints `ready`, waits for `go`, then for
 * `durationMs` keeps `concurrency` checks of one leased token bucket in flight, printing
 * `+` synchronously after every admission (so a process killed at any moment has reported every
 * admission its callers saw) and at the end `{"admitted", "checks", "calls"}` (after
 * Limiter.close gave its unused tokens back).
 *
 * Usage: node --import tsx lease-race-child.ts <redis-url | host:port,...> <prefix> <subject> <durationMs> <windowMs> <limit> <leaseMs> <concurrency>
 */
import { writeSync } from 'node:fs';
import { TokenLeases } from '../../../src/limiter/lease/token-leases.js';
import { Limiter } from '../../../src/limiter/limiter.js';
import { RedisStore } from '../../../src/limiter/stores/redis/redis-store.js';
import { readyThenGo, redisFromArgument } from '../../support/race-child.js';

const [target, prefix, subject, durationMs, windowMs, limit, leaseMs, concurrency] = process.argv.slice(2);
if (!target || !prefix || !subject || !durationMs || !windowMs || !limit || !leaseMs || !concurrency) {
  console.error('usage: lease-race-child.ts <target> <prefix> <subject> <durationMs> <windowMs> <limit> <leaseMs> <concurrency>');
  process.exit(2);
}
const client = redisFromArgument(target);
const leases = new TokenLeases({ client, prefix: `${prefix}:lease`, leaseMs: Number(leaseMs) });
const limiter = new Limiter({ store: new RedisStore({ client, prefix }), leases });
const rules = [{ windowMs: Number(windowMs), limit: Number(limit), algorithm: 'token-bucket' as const, lease: true }];

await client.ping();
await readyThenGo();

/**
 * One `+` per admission, written before the next check: the parent counts what a killed process
 * admitted. stdout is a non-blocking pipe, so a full pipe (a slow parent) answers EAGAIN: write again.
 */
function tellAdmitted(): void {
  for (;;) {
    try {
      writeSync(1, '+\n');
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    }
  }
}

let admitted = 0;
let checks = 0;
const end = performance.now() + Number(durationMs);
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (performance.now() < end) {
      const decision = await limiter.check({ subject, rules });
      checks++;
      if (decision.allowed) {
        admitted++;
        tellAdmitted();
      }
      // A denied check waits a little, as a caller given retryAfterMs would: keeps the loop from spinning.
      else await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }),
);
await limiter.close();
console.log(JSON.stringify({ admitted, checks, calls: leases.calls }));
client.disconnect();

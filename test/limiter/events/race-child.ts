/**
 * One racing process of test/limiter/events/race.int.test.ts. It connects, prints `ready`, waits
 * for `go` on stdin, then fires `<ops>` concurrent ops on one subject and prints
 * `{"fired": n, "passed": m}`. `distinct`: each op brings a value of its own (limit 5 an hour);
 * `last-n`: each op pushes `failed` (even index) or `ok` (n = 1000, m = 1000). `check`: each op is
 * one `decide` of a check (standalone only): a distinct rule (limit 5, a value of its own) and a
 * window (limit 7 an hour), both vetoing, so only the checks the distinct rule admits may write.
 * `ban-check`: each op is one RiskEngine check (one call per check) of the phone `<subject>`
 * against `BAN_RULES` (./ban-rules.ts), windows of limit 10 and of limit 12 banning 60 s; the result also
 * counts the answers that said `BANNED`.
 *
 * Usage: node --import tsx race-child.ts <redis-url | host:port,...> <prefix> <subject> <ops> <distinct|last-n|check|ban-check> <child id>
 */

import { RedisEventStore } from '../../../src/limiter/events/redis-event-store.js';
import type { EventOp } from '../../../src/limiter/events/types.js';
import { directEvents, Limiter, RedisStore, RiskEngine } from '../../../src/limiter/index.js';
import { readyThenGo, redisFromArgument } from '../../support/race-child.js';
import { BAN_RULES } from './ban-rules.js';

const [target, prefix, subject, ops, kind, id] = process.argv.slice(2);
if (!target || !prefix || !subject || !ops || !kind || !id) {
  console.error('usage: race-child.ts <redis-url | host:port,...> <prefix> <subject> <ops> <distinct|last-n|check|ban-check> <child id>');
  process.exit(2);
}
const client = redisFromArgument(target);
const store = new RedisEventStore({ client, prefix, keySecret: 'race' });
const op = (i: number): EventOp =>
  kind === 'distinct'
    ? { kind: 'distinct', subject, windowMs: 3_600_000, limit: 5, value: `${id}:${i}`, record: true }
    : { kind: 'last-n', subject, n: 1000, m: 1000, outcome: 'failed', push: i % 2 === 0 ? 'failed' : 'ok' };

// Warm the connection (and the cluster's slot map) so every child starts its burst at once.
await store.apply([{ kind: 'last-n', subject: `${subject}:warm`, n: 1, m: 1, outcome: 'x' }]);
await readyThenGo();
// One apply per op: each is its own call, as concurrent checks of one process are.
const check = (i: number) =>
  store.decide!({
    ops: [
      { kind: 'distinct', subject, windowMs: 3_600_000, limit: 5, value: `${id}:${i}`, record: true },
      { kind: 'window', subject: `${subject}:w`, windowMs: 3_600_000, limit: 7, record: true },
    ],
    vetoes: [true, true],
  }).then((r) => ({ fired: r[0]!.fired || r[1]!.fired }));
const limiter = new Limiter({ store: new RedisStore({ client, prefix: `${prefix}:lim`, keySecret: 'race' }) });
const engine = new RiskEngine({ windows: limiter, peek: limiter, events: directEvents(store) });
const banCheck = (_: number) =>
  engine
    .check(`${prefix}:`, BAN_RULES, { phone: subject })
    .then((decision) => ({ fired: !decision.allowed, banned: decision.reasons.some((reason) => reason.code === 'BANNED') }));
const results: { fired: boolean; banned?: boolean }[] = await Promise.all(
  Array.from({ length: Number(ops) }, (_, i) =>
    kind === 'check' ? check(i) : kind === 'ban-check' ? banCheck(i) : store.apply([op(i)]).then((r) => r[0]!),
  ),
);
const fired = results.filter((result) => result.fired).length;
const banned = results.filter((result) => result.banned).length;
console.log(JSON.stringify({ fired, passed: results.length - fired, banned }));
client.disconnect();

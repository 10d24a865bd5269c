/**
 * One racing process of test/limiter/race.int.test.ts. It connects, prints `ready`, waits for `go`
 * on stdin, then fires `--checks` concurrent checks on one subject and prints
 * `{"admitted": n, "denied": m}` as JSON on stdout.
 *
 * Usage: node --import tsx test/limiter/race-child.ts <redis-url | host:port,host:port,...> <prefix> <subject> <checks> <windowMs> <limit> [packedLogMax]
 */
import { Limiter } from '../../src/limiter/limiter.js';
import { RedisStore } from '../../src/limiter/stores/redis/redis-store.js';
import { readyThenGo, redisFromArgument } from '../support/race-child.js';

const [target, prefix, subject, checks, windowMs, limit, packedLogMax] = process.argv.slice(2);
if (!target || !prefix || !subject || !checks || !windowMs || !limit) {
  console.error('usage: race-child.ts <redis-url | host:port,...> <prefix> <subject> <checks> <windowMs> <limit>');
  process.exit(2);
}

const client = redisFromArgument(target);
const limiter = new Limiter({
  store: new RedisStore({ client, prefix, packedLogMax: packedLogMax === undefined ? undefined : Number(packedLogMax) }),
});
const rules = [{ windowMs: Number(windowMs), limit: Number(limit) }];

// Warm the connection (and the cluster's slot map) so every child starts its burst at once.
await limiter.peek({ subject: `${subject}:warm`, rules });
await readyThenGo();

const decisions = await Promise.all(Array.from({ length: Number(checks) }, () => limiter.check({ subject, rules })));
const admitted = decisions.filter((decision) => decision.allowed).length;
console.log(JSON.stringify({ admitted, denied: decisions.length - admitted }));
client.disconnect();

/**
 * A contender in the lock race tests, run as a real process:
 *   node --import tsx test/infra/lock/lock-child.ts <redisUrl> <lockName> <leaseMs>
 * Every 20 ms it tries to take the lock when it has none, and does one "unit of work" when it
 * holds it. Each line on stdout is a JSON event with wall time `t` (Date.now(), the same clock in
 * every process on this machine):
 *   {"event":"ready"}  {"event":"acquired","t"}  {"event":"work","t","seq"}
 *   {"event":"lost","t","heldInListener"}  {"event":"released"}
 * The work stamp is read BEFORE asking isHeld(), so "work at t" claims "the lease was ours at t".
 * SIGTERM releases the lock and exits.
 */
import { Redis } from 'ioredis';
import { RedisLeaseLock } from '../../../src/infra/lock/redis-lease-lock.js';

const [redisUrl, name, leaseArg] = process.argv.slice(2);
if (redisUrl === undefined || name === undefined || leaseArg === undefined)
  throw new Error('usage: lock-child <redisUrl> <name> <leaseMs>');

const emit = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
const lock = new RedisLeaseLock({ client: redis, name, leaseMs: Number(leaseArg) });
lock.onLost(() => emit({ event: 'lost', t: Date.now(), heldInListener: lock.isHeld() }));

let seq = 0;
let stopping = false;
const tick = async () => {
  if (stopping) return;
  const t = Date.now();
  if (lock.isHeld()) {
    seq += 1;
    emit({ event: 'work', t, seq });
  } else if (await lock.tryAcquire().catch(() => false)) {
    emit({ event: 'acquired', t: Date.now() });
  }
  setTimeout(() => void tick(), 20);
};

process.on('SIGTERM', () => {
  stopping = true;
  void lock
    .release()
    .then(() => emit({ event: 'released' }))
    .finally(() => {
      redis.disconnect();
      process.exit(0);
    });
});

await redis.ping();
emit({ event: 'ready' });
void tick();

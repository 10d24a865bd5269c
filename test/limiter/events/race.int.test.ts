/**
 * The event rules' atomicity with real processes: 4 processes × 200 concurrent ops on one subject.
 * distinct (limit 5, every op a new value): exactly 5 pass in total. last-n (n = 1000): no push
 * is lost, the count of `failed` afterwards is exactly the number pushed. Standalone and cluster.
 * check (standalone: `decide`): a distinct rule (limit 5) vetoes a window (limit 7) in each check:
 * exactly 5 checks pass and the window holds exactly 5 admissions (none from a denied check).
 * ban-check (standalone, RiskEngine with one call per check): windows of limit 10 and of limit 12
 * banning 60 s on one phone: exactly 10 pass and no answer, then or after, says BANNED.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { RedisEventStore } from '../../../src/limiter/events/redis-event-store.js';
import { directEvents, Limiter, RedisStore, RiskEngine } from '../../../src/limiter/index.js';
import { describeWith, servers } from '../../support/servers.js';
import { BAN_RULES } from './ban-rules.js';

const CHILD = fileURLToPath(new URL('./race-child.ts', import.meta.url));
const PROCESSES = 4;
const OPS = 200;

function startRacer(target: string, prefix: string, subject: string, kind: string, id: number) {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, target, prefix, subject, String(OPS), kind, String(id)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => line === 'ready' && resolve());
    void exited.then((code) => reject(new Error(`race child exited (${code}) before ready: ${stderr}`)));
  });
  const result = new Promise<{ fired: number; passed: number; banned: number }>((resolve, reject) => {
    lines.on('line', (line) => line.startsWith('{') && resolve(JSON.parse(line)));
    void exited.then((code) => reject(new Error(`race child exited (${code}) without a result: ${stderr}`)));
  });
  return { child, ready, result };
}

async function race(target: string, connect: () => Redis | Cluster, kind: 'distinct' | 'last-n' | 'check' | 'ban-check') {
  const prefix = `test:evrace:${randomUUID().slice(0, 8)}`;
  const subject = `race:${randomUUID()}`;
  const racers = Array.from({ length: PROCESSES }, (_, id) => startRacer(target, prefix, subject, kind, id));
  const client = connect();
  try {
    await Promise.all(racers.map((racer) => racer.ready));
    for (const racer of racers) racer.child.stdin.write('go\n');
    const results = await Promise.all(racers.map((racer) => racer.result));
    const passed = results.reduce((sum, r) => sum + r.passed, 0);
    const store = new RedisEventStore({ client, prefix, keySecret: 'race' });
    if (kind === 'ban-check') {
      expect(passed).toBe(10);
      expect(results.map((r) => r.banned)).toEqual(results.map(() => 0));
      const limiter = new Limiter({ store: new RedisStore({ client, prefix: `${prefix}:lim`, keySecret: 'race' }) });
      const engine = new RiskEngine({ windows: limiter, peek: limiter, events: directEvents(store) });
      const after = await engine.check(`${prefix}:`, BAN_RULES, { phone: subject });
      expect(after.reasons.map((reason) => [reason.rule, reason.code])).toEqual([['ten', 'RATE_LIMITED']]);
    } else if (kind === 'check') {
      expect(passed).toBe(5);
      const [after] = await store.apply([{ kind: 'window', subject: `${subject}:w`, windowMs: 3_600_000, limit: 7, record: false }]);
      expect(after).toEqual({ fired: false, count: 5 });
    } else if (kind === 'distinct') {
      expect(passed).toBe(5);
      const [after] = await store.apply([{ kind: 'distinct', subject, windowMs: 3_600_000, limit: 5, value: 'late', record: false }]);
      expect(after).toMatchObject({ fired: true, count: 5 });
    } else {
      const [after] = await store.apply([{ kind: 'last-n', subject, n: 1000, m: 1000, outcome: 'failed' }]);
      expect(after!.count).toBe((PROCESSES * OPS) / 2);
    }
  } finally {
    for (const racer of racers) racer.child.kill();
    const { base } = new RedisEventStore({ client, prefix, keySecret: 'race' }).keyBase(subject);
    await client.del(`${base}d`, `${base}n`);
    if (kind === 'check') await client.del(`${new RedisEventStore({ client, prefix, keySecret: 'race' }).keyBase(`${subject}:w`).base}w`);
    client.disconnect();
  }
}

const clusterTarget = () => servers.redisCluster!.map(({ host, port }) => `${host}:${port}`).join(',');

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'RedisEventStore race between processes (standalone)', () => {
  for (const kind of ['distinct', 'last-n'] as const) {
    it(`${PROCESSES} processes × ${OPS} concurrent ${kind} ops on one subject hold exactly`, async () => {
      await race(servers.redisUrl!, () => new Redis(servers.redisUrl!), kind);
    }, 60_000);
  }
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'RedisEventStore.decide race between processes (standalone)', () => {
  it(`${PROCESSES} processes × ${OPS} concurrent checks: a vetoed check never writes its window`, async () => {
    await race(servers.redisUrl!, () => new Redis(servers.redisUrl!), 'check');
  }, 60_000);

  it(`${PROCESSES} processes × ${OPS} concurrent risk checks, limits 10 and 12 (ban): exactly 10 pass, nothing bans`, async () => {
    await race(servers.redisUrl!, () => new Redis(servers.redisUrl!), 'ban-check');
  }, 60_000);
});

describeWith(servers.redisCluster, 'SLUICE_TEST_REDIS_CLUSTER', 'RedisEventStore race between processes (cluster)', () => {
  for (const kind of ['distinct', 'last-n'] as const) {
    it(`${PROCESSES} processes × ${OPS} concurrent ${kind} ops on one subject hold exactly`, async () => {
      await race(clusterTarget(), () => new Cluster(servers.redisCluster!), kind);
    }, 60_000);
  }
});

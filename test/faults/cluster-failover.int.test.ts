/**
 * Redis Cluster failover under load (docs/degradation.md, "Cluster failover"): a private cluster of
 * 3 masters + 3 replicas (cluster-node-timeout 2000, started here for each run, loopback only), a
 * closed loop of checks over fresh and old subjects, and one master killed with SIGKILL. Four runs:
 * 1. sluice's client options (src/app/redis-client.ts: fail fast) and a plain Limiter: decisions on
 *    the lost slots fail, only until the replica is promoted;
 * 2. ioredis options that retry through the failover (offline queue, no command timeout, retries
 *    on CLUSTERDOWN/failover): decisions wait instead, measured;
 * 3. as 1, with the replica cut off 500 ms before the kill: the writes meanwhile are lost with the
 *    master, and clients were told those admissions: the over-admission equals the lost writes;
 * 4. sluice's client and DegradingLimiter (what the service runs): the breaker answers from the
 *    local fallback meanwhile, and Redis decides again after.
 * Afterwards no subject holds more than its limit in Redis; what clients were told admitted beyond
 * the limit is explained by writes lost with the killed master (acknowledged, not yet replicated),
 * which the test measures. The promoted replica had no copy of the scripts (SCRIPT EXISTS 0) and
 * loads them through the NOSCRIPT → EVAL fallback.
 */
import { Cluster, type ClusterOptions } from 'ioredis';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { createRedisClient } from '../../src/infra/redis-client.js';
import { DegradingLimiter } from '../../src/limiter/degrade/degrading-limiter.js';
import { EventLoopLag } from '../../src/limiter/degrade/loop-lag.js';
import { Limiter } from '../../src/limiter/limiter.js';
import { MemoryStore } from '../../src/limiter/stores/memory/memory-store.js';
import { scripts } from '../../src/limiter/stores/redis/lua-script.js';
import { RedisStore } from '../../src/limiter/stores/redis/redis-store.js';
import type { Decision } from '../../src/limiter/types.js';
import { type ClusterNode, type PrivateCluster, startPrivateCluster } from '../support/private-cluster.js';
import { describeWith } from '../support/servers.js';
import { redisBin, sleep } from './fault-support.js';

const RULES = [{ windowMs: 120_000, limit: 5 }];
const IN_FLIGHT = 32;
/** Long enough that the last 3 s follow the failover (about 4 s after the kill at 2 s) and the breaker closing again, on a loaded machine too. */
const RUN_MS = 14_000;
const KILL_AT_MS = 2_000;
/** A new group of 10 subjects every 200 ms: subjects fill up around the kill, not only before it. */
const GROUP_MS = 200;

interface Outcome {
  start: number;
  end: number;
  subject: string;
  kind: 'admitted' | 'denied' | 'error' | 'degraded';
}

interface RunReport {
  label: string;
  decisions: number;
  errors: number;
  degraded: number;
  /** First and last failed (or degraded) decision, ms after the kill. */
  failFromMs: number | undefined;
  failToMs: number | undefined;
  /** Slowest decision, and slowest that started after the kill. */
  maxLatencyMs: number;
  lostWrites: number;
  overAdmitted: number;
  maxStored: number;
}

const maxOf = <T>(items: readonly T[], value: (item: T) => number) =>
  items.reduce((max, item) => Math.max(max, value(item)), Number.NEGATIVE_INFINITY);
const minOf = <T>(items: readonly T[], value: (item: T) => number) =>
  items.reduce((min, item) => Math.min(min, value(item)), Number.POSITIVE_INFINITY);

type Checker = (subject: string) => Promise<Decision & { degraded?: string }>;

async function load(label: string, check: Checker, kill: () => Promise<void>): Promise<{ outcomes: Outcome[]; killedAt: number }> {
  const outcomes: Outcome[] = [];
  const started = performance.now();
  let killedAt = Number.POSITIVE_INFINITY;
  const killer = sleep(KILL_AT_MS).then(async () => {
    killedAt = performance.now() - started;
    await kill();
  });
  const pick = (now: number) => {
    const group = Math.floor(now / GROUP_MS);
    const g = Math.random() < 0.5 ? group : Math.floor(Math.random() * (group + 1));
    return `${label}:g${g}:${Math.floor(Math.random() * 10)}`;
  };
  const worker = async () => {
    for (;;) {
      const start = performance.now() - started;
      if (start >= RUN_MS) return;
      const subject = pick(start);
      let kind: Outcome['kind'];
      try {
        // A caller's own deadline: a decision that waits longer than 8 s counts as failed.
        const decision = await Promise.race([
          check(subject),
          sleep(8_000).then(() => {
            throw new Error('caller deadline');
          }),
        ]);
        kind = decision.degraded ? 'degraded' : decision.allowed ? 'admitted' : 'denied';
      } catch {
        kind = 'error';
        await sleep(5); // a failing store answers at once: do not spin
      }
      outcomes.push({ start, end: performance.now() - started, subject, kind });
      // An in-process fallback answers through microtasks only: yield, or timers and sockets starve.
      if (kind === 'degraded') await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all([killer, ...Array.from({ length: IN_FLIGHT }, worker)]);
  return { outcomes, killedAt };
}

/** Waits until `node` (the killed master's replica) is a master and every live node says ok. */
async function waitPromoted(cluster: PrivateCluster, replica: ClusterNode, dead: Set<ClusterNode>): Promise<void> {
  const client = cluster.client(replica);
  try {
    for (let i = 0; i < 200; i++) {
      const role = await client.call('ROLE').catch(() => ['?']);
      const info = String(await client.call('CLUSTER', 'INFO').catch(() => ''));
      if ((role as string[])[0] === 'master' && info.includes('cluster_state:ok')) return;
      await sleep(100);
    }
    throw new Error(`replica ${replica.port} was not promoted (dead: ${[...dead].map((n) => n.port).join(',')})`);
  } finally {
    client.disconnect();
  }
}

describeWith(redisBin, 'SLUICE_TEST_REDIS_BIN', 'Redis Cluster failover (3 masters + 3 replicas)', () => {
  let cluster: PrivateCluster;
  const dead = new Set<ClusterNode>();
  const reports: RunReport[] = [];

  // A fresh cluster per run: each run kills a master that has its replica.
  beforeEach(async () => {
    cluster = await startPrivateCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 2000 });
  }, 60_000);
  afterEach(async () => {
    await cluster?.stop();
    dead.clear();
  });
  afterAll(() => {
    console.log(`cluster failover runs:\n${reports.map((report) => JSON.stringify(report)).join('\n')}`);
  });

  /** One run: kill master `index` under load through `check`; then audit every subject in Redis. */
  /** `lagMs`: the replica is cut off this long before the kill, so the writes meanwhile are not replicated. */
  async function run(label: string, index: number, check: Checker, auditClient: Cluster, lagMs = 0): Promise<RunReport> {
    const master = cluster.masters[index]!;
    const replica = cluster.nodes.find((node) => node.replicaOf === master.id)!;
    const replicaClient = cluster.client(replica);
    // Scripts are not replicated: the replica has none of them until it runs one.
    expect(await replicaClient.call('SCRIPT', 'EXISTS', scripts.checkBatch.sha)).toEqual([0]);
    const { outcomes, killedAt } = await load(label, check, async () => {
      if (lagMs > 0) {
        // Frozen replica, link cut by the master: what the master writes now stays in its backlog
        // (a frozen replica alone still gets every write: the kernel buffers the socket).
        replica.child.kill('SIGSTOP');
        const masterClient = cluster.client(master);
        await masterClient.call('CLIENT', 'KILL', 'TYPE', 'replica');
        masterClient.disconnect();
        await sleep(lagMs);
      }
      dead.add(master);
      await master.kill();
      if (lagMs > 0) {
        await sleep(100);
        replica.child.kill('SIGCONT');
      }
    });
    await waitPromoted(cluster, replica, dead);
    expect(await replicaClient.call('SCRIPT', 'EXISTS', scripts.checkBatch.sha)).toEqual([1]);
    replicaClient.disconnect();

    const failed = outcomes.filter((o) => o.kind === 'error' || o.kind === 'degraded');
    const admitted = new Map<string, number>();
    for (const o of outcomes) if (o.kind === 'admitted') admitted.set(o.subject, (admitted.get(o.subject) ?? 0) + 1);
    // What Redis holds now, per subject (peek: nothing recorded), against what clients were told.
    const audit = new Limiter({ store: new RedisStore({ client: auditClient, prefix: 'failover' }) });
    const subjects = [...new Set(outcomes.map((o) => o.subject))];
    let lostWrites = 0;
    let overAdmitted = 0;
    let maxStored = 0;
    for (const subject of subjects) {
      const stored = (await audit.peek({ subject, rules: RULES })).counts[0]!;
      const told = admitted.get(subject) ?? 0;
      maxStored = Math.max(maxStored, stored);
      lostWrites += Math.max(0, told - stored);
      overAdmitted += Math.max(0, told - RULES[0]!.limit);
    }
    const report: RunReport = {
      label,
      decisions: outcomes.length,
      errors: outcomes.filter((o) => o.kind === 'error').length,
      degraded: outcomes.filter((o) => o.kind === 'degraded').length,
      failFromMs: failed.length ? Math.round(minOf(failed, (o) => o.end) - killedAt - lagMs) : undefined,
      failToMs: failed.length ? Math.round(maxOf(failed, (o) => o.end) - killedAt - lagMs) : undefined,
      maxLatencyMs: Math.round(maxOf(outcomes, (o) => o.end - o.start)),
      lostWrites,
      overAdmitted,
      maxStored,
    };
    reports.push(report);
    // No window holds more than its limit in Redis; excess told to clients is lost writes only.
    expect(maxStored).toBeLessThanOrEqual(RULES[0]!.limit);
    expect(overAdmitted).toBeLessThanOrEqual(lostWrites);
    // Failures only during the failover: none in the last 3 s of the run, Redis deciding again.
    const tail = outcomes.filter((o) => o.start > RUN_MS - 3_000);
    expect(tail.length).toBeGreaterThan(100);
    expect(tail.filter((o) => o.kind === 'error' || o.kind === 'degraded')).toHaveLength(0);
    if (failed.length) expect(minOf(failed, (o) => o.start)).toBeGreaterThanOrEqual(killedAt - 50);
    return report;
  }

  const sluiceClient = () =>
    createRedisClient({ kind: 'redis-cluster', nodes: cluster.startupNodes.map((node) => `${node.host}:${node.port}`) }, 1000) as Cluster;

  it('fails decisions only during the failover (sluice client options), then Redis decides again', async () => {
    const client = sluiceClient();
    client.on('error', () => undefined);
    const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'failover' }) });
    try {
      const report = await run('fail', 0, (subject) => limiter.check({ subject, rules: RULES }), client);
      expect(report.errors).toBeGreaterThan(0);
      expect(report.failToMs!).toBeLessThan(6_000);
    } finally {
      client.disconnect();
    }
  }, 60_000);

  it('waits through the failover with retrying ioredis options (measured, not chosen)', async () => {
    const options: ClusterOptions = {
      enableOfflineQueue: true,
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 200,
      maxRedirections: 64,
      redisOptions: { maxRetriesPerRequest: 50, connectTimeout: 500 },
    };
    const client = new Cluster(cluster.startupNodes, options);
    client.on('error', () => undefined);
    const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'failover' }) });
    try {
      const report = await run('wait', 0, (subject) => limiter.check({ subject, rules: RULES }), client);
      expect(report.maxLatencyMs).toBeGreaterThan(1_000);
    } finally {
      client.disconnect();
    }
  }, 60_000);

  it('a write not yet replicated is lost with its master: over-admission is those writes, no more', async () => {
    const client = sluiceClient();
    client.on('error', () => undefined);
    const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'failover' }) });
    try {
      // The replica cut off 500 ms before the kill: every admission of its slots meanwhile is lost.
      const report = await run('lag', 0, (subject) => limiter.check({ subject, rules: RULES }), client, 500);
      expect(report.lostWrites).toBeGreaterThan(0);
      expect(report.overAdmitted).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
  }, 60_000);

  it("answers from the breaker's fallback meanwhile (DegradingLimiter, as the service runs)", async () => {
    const client = sluiceClient();
    client.on('error', () => undefined);
    const primary = new Limiter({ store: new RedisStore({ client, prefix: 'failover' }) });
    // As the service: the loop lag is not Redis's (this loop saturates the process with fallback decisions).
    const loopLag = new EventLoopLag();
    const degrading = new DegradingLimiter({
      primary,
      local: new Limiter({ store: new MemoryStore() }),
      policy: { mode: 'local' },
      breaker: { degradeMs: 50, alertMs: 10, openMs: 1_000, loopLag },
      timeoutMs: 100,
    });
    try {
      // Connections and slot map warm before the breaker sees a call (a cold start is slow on 2 cores).
      await Promise.all(Array.from({ length: 300 }, (_, i) => primary.check({ subject: `warm:${i}`, rules: RULES })));
      const report = await run('degrade', 0, (subject) => degrading.check({ subject, rules: RULES }), client);
      expect(report.errors).toBe(0);
      expect(report.degraded).toBeGreaterThan(0);
    } finally {
      loopLag.close();
      client.disconnect();
    }
  }, 60_000);
});

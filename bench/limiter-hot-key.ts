/**
 * The hot-key benchmark: one subject (a tenant's requests-per-second bucket, a token bucket of
 * 100,000 per second: the seed's hot key ran at 80,000 QPS) checked as fast as this machine allows,
 * a closed loop of 400 in flight from one Node process, on one private redis-server. Leasing off
 * (every decision goes to Redis, batched: all of one subject's concurrent decisions share one slot)
 * against leasing on (TokenLeases, 100 ms blocks): decisions/s, Redis script calls per decision,
 * Redis CPU µs per decision, and the admitted count against the exact count, LIMIT + elapsed / T
 * (the most an exact token bucket admits over the span; leases are given back before the count
 * is read, so a lease can only shift admissions in time, never add any).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Limiter, RedisStore, type Rule, TokenLeases } from '../src/limiter/index.js';
import type { BenchContext, Benchmark } from './support/benchmark.js';
import { startCpuMeter } from './support/cpu.js';
import { closedLoop } from './support/load.js';
import { startPrivateRedis } from './support/redis-server.js';
import { formatCount, formatMs, markdownTable } from './support/table.js';

const LIMIT = 100_000;
const WINDOW_MS = 1_000;
const IN_FLIGHT = 400;
const LEASE_MS = 100;

interface HotRow {
  leasing: boolean;
  decisions: number;
  admitted: number;
  elapsedMs: number;
  calls: number;
  redisMicros: number;
  nodeMicros: number;
  p99: number;
  exact: number;
}

async function measure(client: Redis, leasing: boolean, seconds: number): Promise<HotRow> {
  const counted = {
    calls: 0,
    evalsha: (sha: string, numKeys: number, ...args: (string | number)[]) => {
      counted.calls++;
      return client.evalsha(sha, numKeys, ...args);
    },
    eval: (script: string, numKeys: number, ...args: (string | number)[]) => {
      counted.calls++;
      return client.eval(script, numKeys, ...args);
    },
    del: (...keys: string[]) => client.del(...keys),
  };
  const prefix = `bench:hot:${randomUUID().slice(0, 8)}`;
  const leases = leasing ? new TokenLeases({ client: counted, prefix: `${prefix}:lease`, leaseMs: LEASE_MS }) : undefined;
  const limiter = new Limiter({ store: new RedisStore({ client: counted, prefix }), ...(leases ? { leases } : {}) });
  const rules: Rule[] = [{ windowMs: WINDOW_MS, limit: LIMIT, algorithm: 'token-bucket', lease: true }];
  // Warm-up on another subject: JIT, scripts.
  await closedLoop(async () => (await limiter.check({ subject: 'warm', rules })).allowed, { inFlight: IN_FLIGHT, durationMs: 1_000 });
  counted.calls = 0;
  const stop = await startCpuMeter(client);
  const started = performance.now();
  const result = await closedLoop(async () => (await limiter.check({ subject: 'hot', rules })).allowed, {
    inFlight: IN_FLIGHT,
    durationMs: seconds * 1_000,
  });
  await limiter.close(); // leases given back before anything is counted
  const elapsedMs = performance.now() - started;
  const cpu = await stop();
  const decisions = Math.max(1, result.decisions);
  return {
    leasing,
    decisions: result.decisions,
    admitted: result.admitted,
    elapsedMs: result.elapsedMs,
    calls: counted.calls,
    redisMicros: (cpu.redisMicros ?? Number.NaN) / decisions,
    nodeMicros: cpu.nodeMicros / decisions,
    p99: result.latency?.quantile(0.99) ?? Number.NaN,
    exact: LIMIT + Math.floor((elapsedMs * LIMIT) / WINDOW_MS),
  };
}

export async function runHotKey(context: BenchContext): Promise<HotRow[]> {
  const redis = await startPrivateRedis();
  const client = new Redis(redis.url);
  try {
    const rows: HotRow[] = [];
    for (const leasing of [false, true]) {
      context.progress(`limiter-hot-key: leasing ${leasing ? 'on' : 'off'}`);
      rows.push(await measure(client, leasing, context.seconds));
    }
    return rows;
  } finally {
    client.disconnect();
    await redis.stop();
  }
}

export function hotKeyTable(rows: readonly HotRow[]): string {
  return markdownTable(
    [
      { header: 'leasing' },
      { header: 'decisions/s', align: 'right' },
      { header: 'admitted/s', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'Redis calls/decision', align: 'right' },
      { header: 'Redis CPU µs/decision', align: 'right' },
      { header: 'Node CPU µs/decision', align: 'right' },
      { header: 'admitted', align: 'right' },
      { header: 'exact count', align: 'right' },
      { header: 'over-admission', align: 'right' },
    ],
    rows.map((row) => [
      row.leasing ? `on (${LEASE_MS} ms blocks)` : 'off (exact, batched)',
      formatCount((row.decisions / row.elapsedMs) * 1_000),
      formatCount((row.admitted / row.elapsedMs) * 1_000),
      formatMs(row.p99),
      (row.calls / Math.max(1, row.decisions)).toFixed(5),
      row.redisMicros.toFixed(2),
      row.nodeMicros.toFixed(2),
      formatCount(row.admitted),
      formatCount(row.exact),
      formatCount(Math.max(0, row.admitted - row.exact)),
    ]),
  );
}

export const benchmark: Benchmark = {
  name: 'limiter-hot-key',
  title: `Limiter hot key: one subject, a token bucket of ${formatCount(LIMIT)}/s, leasing off and on`,
  async run(context) {
    return hotKeyTable(await runHotKey(context));
  },
};

/**
 * The scale benchmark: RedisStore on a private Redis Cluster of 1, 2 and 3 masters (each a
 * separate redis-server process, no replicas, test/support/private-cluster.ts), and on one
 * standalone redis-server for reference. Every decision admits and writes (the limiter benchmark's
 * `large` set: 1 min, 1 h, 1 day sliding logs with limits of 1e6), 10,000 subjects picked at
 * random, a closed loop of 400 decisions in flight from this one Node process.
 *
 * Cluster rows batch per node (the default: a script call carries the concurrent decisions of all
 * the slots one master holds); the 3-master cluster also runs batched per slot (`clusterBatches:
 * 'slot'`), with one slot per subject (every script call then carries one decision) and with
 * `slotGroups: 12` (subjects in 12 hash-tag groups, so a slot's batch carries many subjects').
 *
 * Recorded per row: decisions/s, Redis CPU µs per decision on each shard (INFO cpu before and
 * after, divided by all decisions: a shard's share), client Node CPU µs per decision, and
 * decisions per script call. The section ends with the projection of shards
 * and client processes for 500,000 admitting decisions/s, computed from the measured rows.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { Limiter, RedisStore, type Rule } from '../src/limiter/index.js';
import type { ClusterBatches, RedisStoreClient } from '../src/limiter/stores/redis/redis-store.js';
import { startPrivateCluster } from '../test/support/private-cluster.js';
import type { BenchContext, Benchmark } from './support/benchmark.js';
import { closedLoop, type LoadResult } from './support/load.js';
import { infoField } from './support/machine.js';
import { startPrivateRedis } from './support/redis-server.js';
import { formatCount, formatMs, markdownTable } from './support/table.js';

const SUBJECT_COUNT = 10_000;
const IN_FLIGHT = 400;
const TARGET_RATE = 500_000;
/** Hash-tag groups (RedisStoreOptions.slotGroups): divisible by 1 to 4 masters, 3 to 12 per master. */
const SLOT_GROUPS = 12;
/** The default layout: a slot per subject, batched per node. */
const PER_NODE: Layout = { clusterBatches: 'node' };
/** A shard or a client process planned at this share of one core, the rest headroom. */
const PLANNED_LOAD = 0.7;

const subjects = Array.from({ length: SUBJECT_COUNT }, (_, index) => `bench:sms:+86139${String(index).padStart(8, '0')}`);
const RULES: readonly Rule[] = [
  { windowMs: 60_000, limit: 1_000_000, banMs: 600_000 },
  { windowMs: 3_600_000, limit: 1_000_000 },
  { windowMs: 86_400_000, limit: 1_000_000 },
];

/** How a row's store lays out keys and batches. */
interface Layout {
  clusterBatches: ClusterBatches;
  slotGroups?: number;
}

export interface ScaleRow {
  name: string;
  masters: number;
  layout: Layout;
  result: LoadResult;
  /** Redis CPU µs per decision, per shard. */
  shardMicros: number[];
  /** Per shard, percent of one core. */
  shardPercent: number[];
  nodeMicros: number;
  nodePercent: number;
  calls: number;
}

async function cpuSeconds(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  return Number(infoField(info, 'used_cpu_user')) + Number(infoField(info, 'used_cpu_sys'));
}

/** Counts the script calls a store makes through its client. */
function countingClient(client: Redis | Cluster): RedisStoreClient & { calls: number } {
  const counted = {
    calls: 0,
    isCluster: client instanceof Cluster,
    get slots() {
      return client instanceof Cluster ? client.slots : undefined;
    },
    refreshSlotsCache: () => (client instanceof Cluster ? client.refreshSlotsCache() : undefined),
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
  return counted;
}

async function measure(
  name: string,
  masters: number,
  client: Redis | Cluster,
  shards: Redis[],
  seconds: number,
  layout: Layout,
): Promise<ScaleRow> {
  const counted = countingClient(client);
  const prefix = `bench:scale:${randomUUID().slice(0, 8)}`;
  const limiter = new Limiter({ store: new RedisStore({ client: counted, prefix, ...layout }) });
  const attempt = async () =>
    (await limiter.check({ subject: subjects[Math.floor(Math.random() * SUBJECT_COUNT)]!, rules: RULES })).allowed;
  await closedLoop(attempt, { inFlight: IN_FLIGHT, durationMs: Math.min(2_000, seconds * 300) }); // warm-up: JIT, scripts, slot map
  counted.calls = 0;
  const redisStart = await Promise.all(shards.map(cpuSeconds));
  const nodeStart = process.cpuUsage();
  const result = await closedLoop(attempt, { inFlight: IN_FLIGHT, durationMs: seconds * 1_000 });
  const node = process.cpuUsage(nodeStart);
  const redisEnd = await Promise.all(shards.map(cpuSeconds));
  const decisions = Math.max(1, result.decisions);
  const shardSeconds = redisEnd.map((end, i) => end - redisStart[i]!);
  return {
    name,
    masters,
    layout,
    result,
    shardMicros: shardSeconds.map((s) => (s * 1e6) / decisions),
    shardPercent: shardSeconds.map((s) => (s * 1e5) / result.elapsedMs),
    nodeMicros: (node.user + node.system) / decisions,
    nodePercent: (node.user + node.system) / (result.elapsedMs * 10),
    calls: counted.calls,
  };
}

export async function runScale(context: BenchContext): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  const standalone = await startPrivateRedis();
  try {
    context.progress('limiter-cluster: standalone');
    const client = new Redis(standalone.url);
    try {
      rows.push(await measure('standalone redis-server', 1, client, [client], context.seconds, PER_NODE));
    } finally {
      client.disconnect();
    }
  } finally {
    await standalone.stop();
  }
  for (const masters of [1, 2, 3]) {
    context.progress(`limiter-cluster: ${masters} master(s)`);
    const cluster = await startPrivateCluster({ masters });
    const client = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    const shards = cluster.masters.map((node) => cluster.client(node));
    const label = `cluster, ${masters} master${masters > 1 ? 's' : ''}`;
    try {
      rows.push(await measure(`${label}, batched per node`, masters, client, shards, context.seconds, PER_NODE));
      // Batched per slot (what earlier builds did), with and without slot groups, for the comparison.
      if (masters === 3) {
        const perSlot = { clusterBatches: 'slot' } as const;
        rows.push(await measure(`${label}, per slot, a slot per subject`, masters, client, shards, context.seconds, perSlot));
        const grouped = { ...perSlot, slotGroups: SLOT_GROUPS };
        rows.push(await measure(`${label}, per slot, ${SLOT_GROUPS} slot groups`, masters, client, shards, context.seconds, grouped));
      }
    } finally {
      client.disconnect();
      for (const shard of shards) shard.disconnect();
      await cluster.stop();
    }
  }
  return rows;
}

const rate = (row: ScaleRow) => (row.result.decisions / row.result.elapsedMs) * 1_000;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

export function scaleTable(rows: readonly ScaleRow[]): string {
  return markdownTable(
    [
      { header: 'Redis' },
      { header: 'decisions/s', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'Redis CPU µs/decision, per shard', align: 'right' },
      { header: 'total', align: 'right' },
      { header: 'shard CPU', align: 'right' },
      { header: 'Node CPU µs/decision', align: 'right' },
      { header: 'Node CPU', align: 'right' },
      { header: 'decisions/call', align: 'right' },
      { header: 'failures', align: 'right' },
    ],
    rows.map((row) => [
      row.name,
      formatCount(rate(row)),
      formatMs(row.result.latency?.quantile(0.99)),
      row.shardMicros.map((micros) => micros.toFixed(1)).join(' / '),
      sum(row.shardMicros).toFixed(1),
      row.shardPercent.map((percent) => `${Math.round(percent)} %`).join(' / '),
      row.nodeMicros.toFixed(1),
      `${Math.round(row.nodePercent)} %`,
      (row.result.decisions / Math.max(1, row.calls)).toFixed(1),
      formatCount(row.result.failures),
    ]),
  );
}

/** The arithmetic for 500,000 admitting decisions/s, from the 3-master row batched per node. */
export function projection(rows: readonly ScaleRow[]): string {
  const row = rows.find((r) => r.masters === 3 && r.layout === PER_NODE) ?? rows[rows.length - 1]!;
  const redis = sum(row.shardMicros);
  const shardRate = (PLANNED_LOAD * 1e6) / redis;
  const shards = Math.ceil(TARGET_RATE / shardRate);
  const clientRate = (PLANNED_LOAD * 1e6) / row.nodeMicros;
  const clients = Math.ceil(TARGET_RATE / clientRate);
  return [
    `Projection for ${formatCount(TARGET_RATE)} admitting decisions/s, from the row "${row.name}", each shard and each client process planned at ${PLANNED_LOAD * 100} % of one core:`,
    '',
    `- Redis: ${redis.toFixed(1)} µs of Redis CPU per decision (the shards' sum) → one shard decides ${PLANNED_LOAD} × 1,000,000 / ${redis.toFixed(1)} = ${formatCount(shardRate)} decisions/s → ${formatCount(TARGET_RATE)} / ${formatCount(shardRate)} = **${(TARGET_RATE / shardRate).toFixed(2)} → ${shards} shards** (goal ≤ 4).`,
    `- Clients: ${row.nodeMicros.toFixed(1)} µs of Node CPU per decision → one process decides ${PLANNED_LOAD} × 1,000,000 / ${row.nodeMicros.toFixed(1)} = ${formatCount(clientRate)} decisions/s → **${clients} client processes** (one core each).`,
  ].join('\n');
}

export const benchmark: Benchmark = {
  name: 'limiter-cluster',
  title: 'Limiter on Redis Cluster: 1, 2 and 3 masters',
  async run(context) {
    const rows = await runScale(context);
    return `${scaleTable(rows)}\n\n${projection(rows)}`;
  },
};

/**
 * Delivery throughput: messages accepted through the real admission chain
 * (`runtime.http.messages.send`, every one committed to SQL before it is accepted) and sent by the
 * worker role's dispatchers to a zero-latency HTTP stub on 127.0.0.1, from the first accept to
 * the last row `sent`. Embedded default (SQLite, synchronous=FULL), Redis mode (private
 * redis-server + SQLite: the roster and partition locks) and broker mode (the same, plus a private
 * nats-server with JetStream), beside BullMQ 5 adding and processing the same number of jobs, its
 * worker calling the same stub at the same concurrency (once with fetch, once with sluice's HTTP client), in the same run.
 * Each row reports the CPU time per message of this process (sluice or BullMQ, and the stub), of
 * Redis and of nats-server over its span.
 * Then scheduled lateness: 1,000 messages due within the same second, `sentAt − dueAt`.
 *
 * `BENCH_DELIVERY_MESSAGES` sets the message count (default 20,000; e.g. 2,000 for a smoke run).
 * `BENCH_PG_URL` (a PostgreSQL admin URL; a database is made per row) adds the production path,
 * PostgreSQL + Redis with and without JetStream, between the BullMQ rows; `BENCH_PG_DATA` (its data
 * folder) adds its CPU (postmaster and backends, `/proc`). Broker rows run with the status events
 * bus (the default) and without it (`SLUICE_BROKER_EVENTS=false`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createRuntime, type Runtime } from '../src/main/runtime.js';
import { startWorker } from '../src/main/worker.js';
import { createConsoleProvider } from '../src/providers/console.js';
import { postOnce } from '../src/providers/http-request.js';
import { loadSettings } from '../src/settings/settings.js';
import type { BenchContext, Benchmark } from './support/benchmark.js';
import { postgresCpuMicros, startCpuMeter } from './support/cpu.js';
import { type HttpStub, startHttpStub } from './support/http-stub.js';
import { type PrivateNats, startPrivateNats } from './support/nats-server.js';
import { startPrivateRedis } from './support/redis-server.js';
import { countSent, pool, positiveEnv, sleep } from './support/sends.js';
import { formatCount, formatMs, markdownTable } from './support/table.js';

const SEND_CONCURRENCY = 32;
/** Accepts (or BullMQ adds) in flight at once: the callers of a busy API. */
const ACCEPT_CONCURRENCY = 200;
const LATENESS_MESSAGES = 1000;
const TIMEOUT_MS = 10 * 60_000;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Throughput {
  name: string;
  count: number;
  acceptMs: number;
  totalMs: number;
  load: string;
  /** CPU time per message over first accept → last sent, in µs: this process, Redis, nats-server and PostgreSQL (undefined when the row uses none). */
  cpu: { node: number; redis: number | undefined; nats: number | undefined; postgres: number | undefined };
}

/** What a row runs against, and whose CPU it reads. */
interface Servers {
  redis?: { url: string; info: Redis };
  nats?: PrivateNats;
  /** A PostgreSQL server (BENCH_PG_URL, an admin URL) and its data folder (BENCH_PG_DATA, for its CPU). */
  postgres?: { adminUrl: string; dataDir: string | undefined };
  /** More settings of the row (SLUICE_BROKER_EVENTS=false). */
  env?: Record<string, string>;
}

/** Starts measuring the CPU of this process and the row's servers; the returned function gives µs per message. */
async function cpuMeter(servers: Servers, count: number): Promise<() => Promise<Throughput['cpu']>> {
  const stop = await startCpuMeter(servers.redis?.info);
  const natsStart = servers.nats?.cpuMicros();
  const pgData = servers.postgres?.dataDir;
  const pgStart = pgData === undefined ? undefined : postgresCpuMicros(pgData);
  return async () => {
    const usage = await stop();
    const natsMicros = servers.nats && natsStart !== undefined ? servers.nats.cpuMicros() - natsStart : undefined;
    const pgMicros = pgData !== undefined && pgStart !== undefined ? postgresCpuMicros(pgData) - pgStart : undefined;
    return {
      node: usage.nodeMicros / count,
      redis: usage.redisMicros === undefined ? undefined : usage.redisMicros / count,
      nats: natsMicros === undefined ? undefined : natsMicros / count,
      postgres: pgMicros === undefined ? undefined : pgMicros / count,
    };
  };
}

interface Lateness {
  name: string;
  p50: number;
  p99: number;
  max: number;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');

/**
 * Waits until `target` messages of the tenant are `sent`; returns when that was seen
 * (performance.now()). The stub's request count is free to read, so SQL is asked only once the
 * stub has seen `target` requests since `baseline`: a count query every few ms would compete
 * with the dispatchers for the one SQLite connection and the CPU.
 */
async function waitForSent(
  runtime: Runtime,
  tenantId: string,
  target: number,
  stub: HttpStub,
  baseline: number,
  context: BenchContext,
  label: string,
): Promise<number> {
  const deadline = performance.now() + TIMEOUT_MS;
  let lastReport = performance.now();
  for (;;) {
    if (stub.requests() - baseline >= target) {
      const sent = await countSent(runtime, tenantId);
      if (sent >= target) return performance.now();
    }
    if (performance.now() > deadline)
      throw new Error(`${label}: only ${await countSent(runtime, tenantId)} of ${target} sent after ${TIMEOUT_MS} ms`);
    if (performance.now() - lastReport > 5000) {
      context.progress(`${label}: ${stub.requests() - baseline} / ${target} requests`);
      lastReport = performance.now();
    }
    await sleep(5);
  }
}

/** A tenant (no frequency rules) whose webhooks go to the stub, unpaced. */
async function tenantWithStub(runtime: Runtime, name: string, url: string) {
  const tenant = await runtime.http.tenants.createTenant(name);
  await runtime.repositories.providers.create({
    scope: tenant.id,
    channel: 'webhook',
    kind: 'http',
    name: 'stub',
    priority: 1,
    qps: 1_000_000,
    config: { url, timeoutMs: 5000 },
    secret: JSON.stringify({ signingSecret: 'bench-signing-secret' }),
  });
  return tenant;
}

async function runSluice(
  name: string,
  stub: HttpStub,
  count: number,
  context: BenchContext,
  servers: Servers = {},
): Promise<{ throughput: Throughput; lateness: Lateness }> {
  const redisUrl = servers.redis?.url;
  const natsUrl = servers.nats?.url;
  const prefix = `bench${process.pid}x${Date.now().toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-delivery-'));
  const database = servers.postgres ? await createPgDatabase(servers.postgres.adminUrl) : undefined;
  const env: Record<string, string> = {
    SLUICE_DB_URL: database?.url ?? `sqlite:${join(dir, 'sluice.db')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
    SLUICE_SEND_CONCURRENCY: String(SEND_CONCURRENCY),
    ...(redisUrl ? { SLUICE_REDIS_URL: redisUrl, SLUICE_REDIS_KEY_PREFIX: `${prefix}:` } : {}),
    ...(natsUrl ? { SLUICE_BROKER_URL: natsUrl, SLUICE_BROKER_PREFIX: prefix } : {}),
    ...servers.env,
  };
  const runtime = await createRuntime(loadSettings(env, undefined));
  const delivery = startWorker(runtime, createConsoleProvider({ id: 'console', channel: 'webhook', out: { write: () => true } }));
  try {
    const tenant = await tenantWithStub(runtime, `bench-${name}`, stub.url);
    const loadBefore = load();
    const baseline = stub.requests();
    context.progress(`${name}: accepting ${count} messages`);
    const cpu = await cpuMeter(servers, count);
    const started = performance.now();
    await pool(count, ACCEPT_CONCURRENCY, (i) =>
      runtime.http.messages.send(tenant.apiKey, { channel: 'webhook', to: `bench-${i}`, body: `hello ${i}` }),
    );
    const acceptMs = performance.now() - started;
    const finished = await waitForSent(runtime, tenant.id, count, stub, baseline, context, name);
    const throughput = { name, count, acceptMs, totalMs: finished - started, load: loadBefore, cpu: await cpu() };

    // Scheduled lateness: LATENESS_MESSAGES due within one second, 3 s from now.
    const lateTenant = await tenantWithStub(runtime, `bench-${name}-late`, stub.url);
    const second = Math.ceil(Date.now() / 1000) * 1000 + 3000;
    context.progress(`${name}: ${LATENESS_MESSAGES} messages due in the second starting ${new Date(second).toISOString()}`);
    const ids: string[] = [];
    const lateBaseline = stub.requests();
    await pool(LATENESS_MESSAGES, ACCEPT_CONCURRENCY, async (i) => {
      const { id } = await runtime.http.messages.send(lateTenant.apiKey, {
        channel: 'webhook',
        to: `late-${i}`,
        body: `late ${i}`,
        sendAt: second + Math.floor((i * 1000) / LATENESS_MESSAGES),
      });
      ids.push(id);
    });
    if (Date.now() >= second) context.progress(`${name}: WARNING accepting the scheduled messages took past their due second`);
    await waitForSent(runtime, lateTenant.id, LATENESS_MESSAGES, stub, lateBaseline, context, `${name} lateness`);
    const rows = await runtime.database.db
      .selectFrom('messages')
      .select(['due_at', 'sent_at'])
      .where('tenant_id', '=', lateTenant.id)
      .execute();
    const late = rows.map((row) => Number(row.sent_at) - Number(row.due_at)).sort((a, b) => a - b);
    return { throughput, lateness: { name, p50: percentile(late, 50), p99: percentile(late, 99), max: late.at(-1) ?? Number.NaN } };
  } finally {
    await delivery.stop();
    await runtime.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A database of its own on the PostgreSQL server at `adminUrl`, dropped after the row. */
async function createPgDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sluice_bench_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * `client`: how the worker POSTs. `fetch` is what a BullMQ user would write; `node-http` is the
 * keep-alive client sluice's providers use, so that row compares the queues alone.
 */
async function runBullMq(
  stub: HttpStub,
  count: number,
  context: BenchContext,
  redis: NonNullable<Servers['redis']>,
  client: 'fetch' | 'node-http',
): Promise<Throughput> {
  const connection = { host: '127.0.0.1', port: Number(new URL(redis.url).port), maxRetriesPerRequest: null };
  const queueName = `bench-delivery-${process.pid}-${client}`;
  const queue = new Queue(queueName, { connection, defaultJobOptions: { attempts: 5, backoff: { type: 'exponential', delay: 1000 } } });
  let completed = 0;
  let failed = 0;
  let resolveDone: (at: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  const worker = new Worker(
    queueName,
    async (job) => {
      const headers = { 'content-type': 'application/json', 'x-sluice-message-id': String(job.id) };
      const body = JSON.stringify(job.data);
      if (client === 'fetch') {
        const response = await fetch(stub.url, { method: 'POST', headers, body });
        await response.text();
        if (!response.ok) throw new Error(`stub answered ${response.status}`);
        return;
      }
      const answer = await postOnce({ providerId: 'bullmq', url: stub.url, headers, body, timeoutMs: 5000 });
      if (answer.status < 200 || answer.status >= 300) throw new Error(`stub answered ${answer.status}`);
    },
    { connection, concurrency: SEND_CONCURRENCY },
  );
  worker.on('completed', () => {
    completed++;
    if (completed === count) resolveDone(performance.now());
  });
  worker.on('failed', () => {
    failed++;
  });
  try {
    await worker.waitUntilReady();
    await queue.waitUntilReady();
    const loadBefore = load();
    context.progress(`bullmq (${client}): adding ${count} jobs`);
    const cpu = await cpuMeter({ redis }, count);
    const started = performance.now();
    await pool(count, ACCEPT_CONCURRENCY, (i) => queue.add('send', { channel: 'webhook', to: `bench-${i}`, body: `hello ${i}` }));
    const acceptMs = performance.now() - started;
    // Unref'd: a pending 10-minute timer would keep the process alive after the run.
    const timeout = new Promise<number>((resolve) => setTimeout(() => resolve(Number.NaN), TIMEOUT_MS).unref());
    const finished = await Promise.race([done, timeout]);
    if (Number.isNaN(finished)) throw new Error(`bullmq: only ${completed} of ${count} completed (${failed} failures)`);
    const name = client === 'fetch' ? 'BullMQ 5, worker with fetch' : "BullMQ 5, worker with sluice's client";
    return { name, count, acceptMs, totalMs: finished - started, load: loadBefore, cpu: await cpu() };
  } finally {
    await worker.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}

export const benchmark: Benchmark = {
  name: 'delivery',
  title: 'Delivery',
  async run(context) {
    const count = positiveEnv('BENCH_DELIVERY_MESSAGES', 20_000);
    const stub = await startHttpStub();
    const redisServer = await startPrivateRedis();
    const redis = { url: redisServer.url, info: new Redis(redisServer.url) };
    const nats = await startPrivateNats();
    try {
      const embedded = await runSluice('embedded (SQLite)', stub, count, context);
      const withRedis = await runSluice('Redis + SQLite (roster)', stub, count, context, { redis });
      const withBroker = await runSluice('Redis + SQLite + JetStream (broker)', stub, count, context, { redis, nats });
      const quiet = { SLUICE_BROKER_EVENTS: 'false' };
      const brokerQuiet = await runSluice('… broker, SLUICE_BROKER_EVENTS=false', stub, count, context, { redis, nats, env: quiet });
      // The production path: PostgreSQL (BENCH_PG_URL, e.g. the test servers'), alternated with BullMQ.
      const pgUrl = process.env.BENCH_PG_URL;
      const postgres = pgUrl ? { adminUrl: pgUrl, dataDir: process.env.BENCH_PG_DATA || undefined } : undefined;
      const pgRows: Throughput[] = [];
      const bullFetch = await runBullMq(stub, count, context, redis, 'fetch');
      if (postgres) pgRows.push((await runSluice('PostgreSQL + Redis (roster)', stub, count, context, { redis, postgres })).throughput);
      const bullSameClient = await runBullMq(stub, count, context, redis, 'node-http');
      if (postgres) {
        const servers = { redis, nats, postgres };
        pgRows.push((await runSluice('PostgreSQL + Redis + JetStream (broker)', stub, count, context, servers)).throughput);
        pgRows.push((await runSluice('… broker, SLUICE_BROKER_EVENTS=false', stub, count, context, { ...servers, env: quiet })).throughput);
      }
      const rate = (result: Throughput) => (result.count * 1000) / result.totalMs;
      const micros = (value: number | undefined) => (value === undefined ? '—' : `${value.toFixed(0)} µs`);
      const rows = [
        embedded.throughput,
        withRedis.throughput,
        withBroker.throughput,
        brokerQuiet.throughput,
        ...pgRows,
        bullFetch,
        bullSameClient,
      ];
      const total = (result: Throughput) => result.cpu.node + (result.cpu.redis ?? 0) + (result.cpu.nats ?? 0) + (result.cpu.postgres ?? 0);
      const throughputRows = rows.map((result) => [
        result.name,
        formatCount(result.count),
        `${formatCount((result.count * 1000) / result.acceptMs)} /s`,
        `${(result.totalMs / 1000).toFixed(2)} s`,
        `${formatCount(rate(result))} /s`,
        `${(rate(result) / rate(bullFetch)).toFixed(2)}×`,
        `${(rate(result) / rate(bullSameClient)).toFixed(2)}×`,
        `${(rate(result) / rate(withRedis.throughput)).toFixed(2)}×`,
        micros(result.cpu.node),
        micros(result.cpu.redis),
        micros(result.cpu.nats),
        micros(result.cpu.postgres),
        micros(total(result)),
        result.load,
      ]);
      const throughput = markdownTable(
        [
          { header: 'system' },
          { header: 'messages', align: 'right' },
          { header: 'accept (add) rate', align: 'right' },
          { header: 'first accept → last sent', align: 'right' },
          { header: 'sent', align: 'right' },
          { header: 'vs BullMQ + fetch', align: 'right' },
          { header: "vs BullMQ + sluice's client", align: 'right' },
          { header: 'vs roster', align: 'right' },
          { header: 'CPU/msg: this process', align: 'right' },
          { header: 'Redis', align: 'right' },
          { header: 'nats-server', align: 'right' },
          { header: 'postgres', align: 'right' },
          { header: 'all processes', align: 'right' },
          { header: 'load 1/5/15 before' },
        ],
        throughputRows,
      );
      const lateness = markdownTable(
        [{ header: 'mode' }, { header: 'p50', align: 'right' }, { header: 'p99', align: 'right' }, { header: 'max', align: 'right' }],
        [embedded.lateness, withRedis.lateness, withBroker.lateness, brokerQuiet.lateness].map((row) => [
          row.name,
          `${formatMs(row.p50)} ms`,
          `${formatMs(row.p99)} ms`,
          `${formatMs(row.max)} ms`,
        ]),
      );
      return [
        `Accept-to-sent throughput: ${formatCount(count)} messages through \`runtime.http.messages.send\` (${ACCEPT_CONCURRENCY} in flight), sent by the worker role (SLUICE_SEND_CONCURRENCY=${SEND_CONCURRENCY}) to a zero-latency HTTP stub on 127.0.0.1; BullMQ adds as many jobs (${ACCEPT_CONCURRENCY} in flight) and its worker (concurrency ${SEND_CONCURRENCY}) POSTs each to the same stub, once with fetch (what a BullMQ user writes) and once with sluice's own HTTP client (keep-alive node:http; the queues alone compared). Sluice accepts a message only once its row is fsync'd in SQLite, and commits every claim, attempt and outcome there too (their fsync runs but is not awaited: docs/storage.md); BullMQ keeps its jobs in a Redis without persistence. The broker row hands every due message to a JetStream work-queue stream (file storage) and pulls it back before sending. CPU per message: this process (sluice or BullMQ, and the in-process stub), Redis, nats-server, over first accept → last sent.`,
        '',
        throughput,
        '',
        `Scheduled lateness (\`sentAt − dueAt\`): ${formatCount(LATENESS_MESSAGES)} messages due within the same second (SLUICE_POLL_MS default).`,
        '',
        lateness,
      ].join('\n');
    } finally {
      redis.info.disconnect();
      await nats.stop();
      await redisServer.stop();
      await stub.close();
    }
  },
};

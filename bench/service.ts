/**
 * The message service under load: autocannon against `POST /v1/messages` (distinct recipients, the
 * seed's rules on, every accepted message durable in SQLite before 202) on the embedded default and
 * on Redis + SQLite, beside a bare Fastify that answers the same POST with nothing behind it.
 * Each server runs in its own process (API role only), the load generator in this one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { Benchmark } from './support/benchmark.js';
import { processCpuMicros } from './support/cpu.js';
import { startPrivateRedis } from './support/redis-server.js';
import { formatCount, formatMs, markdownTable } from './support/table.js';

/** `BENCH_SLUICE_CLI`: another checkout's `src/cli/main.ts`, to measure a build before a change beside it. */
export const cli = process.env.BENCH_SLUICE_CLI ?? new URL('../src/cli/main.ts', import.meta.url).pathname;
const bare = new URL('./support/bare-fastify.ts', import.meta.url).pathname;
export const peerStack = new URL('./support/peer-stack.ts', import.meta.url).pathname;
export const CONNECTIONS = 100;
export const ADMIN = 'bench-admin';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface Server {
  base: string;
  child: ChildProcess;
}

/**
 * `BENCH_PROFILE_DIR`: the sluice servers run with `--cpu-prof` into that folder (stopped with
 * SIGTERM, so the profile is written on their way out); the profiler's own cost lowers the rates.
 */
const profileDir = process.env.BENCH_PROFILE_DIR;

export async function startServer(script: string, args: string[], env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const profile = profileDir && script === cli ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env, PORT: String(port), SLUICE_PORT: String(port) },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(base);
      return { base, child };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${script} did not start`);
}

/** Stops a sluice server and waits for its exit (SIGTERM: its shutdown drains and, profiled, writes the profile). */
export async function stop(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

/** A tenant with the seed rules on sms; returns its API key. */
export async function setUpTenant(base: string): Promise<string> {
  const headers = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
  const tenant = (await (
    await fetch(`${base}/v1/admin/tenants`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })
  ).json()) as { id: string; apiKey: string };
  const rules = [
    { windowSeconds: 60, limit: 3, banSeconds: 600 },
    { windowSeconds: 3600, limit: 10, banSeconds: 600 },
    { windowSeconds: 86_400, limit: 50, banSeconds: 600 },
  ];
  await fetch(`${base}/v1/admin/tenants/${tenant.id}/rules/sms`, { method: 'PUT', headers, body: JSON.stringify({ rules }) });
  return tenant.apiKey;
}

export interface Row {
  name: string;
  accepted: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** The server process's CPU (user + system, all threads) over the measured span, per accepted message, µs. */
  cpuPerMessage: number;
}

/**
 * Unmeasured load before each measured row: the first seconds of a fresh process are its JIT
 * compiling the path (and tsx its sources), which would count in the row's CPU per message.
 */
const warmUpSeconds = (seconds: number) => Math.min(3, Math.max(1, seconds / 2));

/**
 * Warms the server up, then measures `seconds` of `run` and the server process's CPU over exactly
 * that span; `accepted` counts the messages stored so far (called before the span, and after it
 * with its result).
 */
async function measured(
  server: Server,
  seconds: number,
  run: (seconds: number) => Promise<autocannon.Result>,
  accepted: (result?: autocannon.Result) => Promise<number>,
): Promise<{ result: autocannon.Result; acceptedPerSecond: number; cpuPerMessage: number }> {
  await run(warmUpSeconds(seconds));
  const storedBefore = await accepted();
  const cpuBefore = processCpuMicros(server.child.pid!);
  const result = await run(seconds);
  const cpu = processCpuMicros(server.child.pid!) - cpuBefore;
  const count = (await accepted(result)) - storedBefore;
  return { result, acceptedPerSecond: count / seconds, cpuPerMessage: cpu / count };
}

/** Recipients handed out so far, by every load of this process: each is new to every server's rules. */
let recipients = 0;

export async function load(name: string, server: Server, apiKey: string, seconds: number): Promise<Row> {
  const run = (duration: number) =>
    autocannon({
      url: `${server.base}/v1/messages`,
      connections: CONNECTIONS,
      duration,
      requests: [
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          // A new recipient each time: every request passes the rules and becomes a stored message.
          setupRequest: (request) => {
            recipients++;
            const number = `+86138${String(recipients % 100_000_000).padStart(8, '0')}`;
            return { ...request, body: JSON.stringify({ channel: 'sms', to: number, body: 'Your code is 1234' }) };
          },
        },
      ],
    });
  // A single send's 2xx is one accepted message.
  const { result, acceptedPerSecond, cpuPerMessage } = await measured(server, seconds, run, async (done) => done?.['2xx'] ?? 0);
  return { name, accepted: acceptedPerSecond, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, cpuPerMessage };
}

/** Messages per batch request, and the connections that carry them (each request is 100 messages' work). */
export const BATCH = 100;
export const BATCH_CONNECTIONS = 10;

/**
 * `POST /v1/messages/batch` with {@link BATCH} distinct recipients per request. Accepted messages
 * are counted where they are stored (`stored`: the server's SQLite file, the peer's queue), not
 * inferred from 200s: a 200 batch may hold refused messages.
 */
export async function loadBatch(
  name: string,
  server: Server,
  apiKey: string,
  seconds: number,
  stored: () => Promise<number>,
): Promise<Row> {
  const run = (duration: number) =>
    autocannon({
      url: `${server.base}/v1/messages/batch`,
      connections: BATCH_CONNECTIONS,
      duration,
      requests: [
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          setupRequest: (request) => {
            const messages = Array.from({ length: BATCH }, () => {
              recipients++;
              return { channel: 'sms', to: `+86139${String(recipients % 100_000_000).padStart(8, '0')}`, body: 'Your code is 1234' };
            });
            return { ...request, body: JSON.stringify({ messages }) };
          },
        },
      ],
    });
  const { result, acceptedPerSecond, cpuPerMessage } = await measured(server, seconds, run, stored);
  return { name, accepted: acceptedPerSecond, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, cpuPerMessage };
}

export async function storedMessages(dbFile: string): Promise<number> {
  const { default: Sqlite } = await import('better-sqlite3');
  const db = new Sqlite(dbFile, { readonly: true });
  try {
    return Number((db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n);
  } finally {
    db.close();
  }
}

export const benchmark: Benchmark = {
  name: 'service',
  title: 'Service: POST /v1/messages',
  async run(context) {
    const rows: Row[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-service-'));
    const common = { SLUICE_ROLES: 'api', SLUICE_ADMIN_TOKEN: ADMIN, SLUICE_LOG_LEVEL: 'warn' };

    context.progress('bare fastify');
    const peer = await startServer(bare, [], {});
    try {
      rows.push(await load('bare Fastify (no work)', peer, 'x', context.seconds));
    } finally {
      peer.child.kill('SIGKILL');
    }

    context.progress('sluice embedded (SQLite, in-process limiter)');
    const embedded = await startServer(cli, ['serve'], {
      ...common,
      SLUICE_DB_URL: `sqlite:${join(dir, 'embedded.db')}`,
      SLUICE_SECRET_KEY_FILE: join(dir, 'k1'),
    });
    try {
      rows.push(await load('sluice embedded (SQLite)', embedded, await setUpTenant(embedded.base), context.seconds));
    } finally {
      await stop(embedded);
    }

    context.progress('sluice Redis + SQLite');
    const redis = await startPrivateRedis();
    const withRedis = await startServer(cli, ['serve'], {
      ...common,
      SLUICE_DB_URL: `sqlite:${join(dir, 'redis.db')}`,
      SLUICE_SECRET_KEY_FILE: join(dir, 'k2'),
      SLUICE_REDIS_URL: redis.url,
    });
    try {
      rows.push(await load('sluice Redis + SQLite', withRedis, await setUpTenant(withRedis.base), context.seconds));
    } finally {
      await stop(withRedis);
    }

    // The same server, a fresh database, batches of 100: what one batch request saves.
    context.progress('sluice Redis + SQLite, batches of 100');
    const batchDb = join(dir, 'batch.db');
    const batched = await startServer(cli, ['serve'], {
      ...common,
      SLUICE_DB_URL: `sqlite:${batchDb}`,
      SLUICE_SECRET_KEY_FILE: join(dir, 'k3'),
      SLUICE_REDIS_URL: redis.url,
      SLUICE_REDIS_KEY_PREFIX: 'batch:',
    });
    try {
      rows.push(
        await loadBatch(`sluice Redis + SQLite, batch of ${BATCH}`, batched, await setUpTenant(batched.base), context.seconds, () =>
          storedMessages(batchDb),
        ),
      );
    } finally {
      await stop(batched);
    }
    const single = rows.find((row) => row.name === 'sluice Redis + SQLite')!.accepted;
    const batchRatio = rows.at(-1)!.accepted / single;

    // The stack a user would build instead, on the same Redis (bench/support/peer-stack.ts).
    context.progress('peer: Fastify + libphonenumber-js + RateLimiterUnion + BullMQ');
    const peerStackServer = await startServer(peerStack, [], { REDIS_URL: redis.url });
    const { Redis } = await import('ioredis');
    const counter = new Redis(redis.url);
    try {
      rows.push(await load('peer stack, queue.add', peerStackServer, 'x', context.seconds));
      rows.push(
        await loadBatch(`peer stack, addBulk of ${BATCH}`, peerStackServer, 'x', context.seconds, () => counter.llen('bull:messages:wait')),
      );
    } finally {
      peerStackServer.child.kill('SIGKILL');
      counter.disconnect();
      await redis.stop();
    }
    const peerSingle = rows.at(-2)!.accepted;
    const peerBatchRate = rows.at(-1)!.accepted;
    const sluiceBatch = rows.find((row) => row.name.startsWith('sluice Redis + SQLite, batch'))!.accepted;

    const reference = rows[0]!.accepted;
    const table = markdownTable(
      [
        { header: 'server' },
        { header: 'accepted/s', align: 'right' },
        { header: 'vs bare', align: 'right' },
        { header: 'p50 ms', align: 'right' },
        { header: 'p99 ms', align: 'right' },
        { header: 'non-2xx', align: 'right' },
        { header: 'server CPU µs/msg', align: 'right' },
      ],
      rows.map((row) => [
        row.name,
        formatCount(row.accepted),
        `${((row.accepted / reference) * 100).toFixed(0)} %`,
        formatMs(row.p50),
        formatMs(row.p99),
        String(row.non2xx),
        row.cpuPerMessage.toFixed(0),
      ]),
    );
    return `autocannon, ${CONNECTIONS} connections (${BATCH_CONNECTIONS} for batches of ${BATCH}: accepted messages counted in the database; p50/p99 per request), ${context.seconds} s per row; each server in its own process (API role), distinct recipients, the seed's three rules on, SQLite synchronous=FULL with group commit.\n\n${table}\n\nTarget: sluice ≥ 50 % of bare Fastify's requests/s with every message durable in SQLite. Batches of ${BATCH} vs single sends (Redis + SQLite): ${batchRatio.toFixed(1)}× (target ≥ 5×). sluice Redis mode vs the peer stack: single sends ${(single / peerSingle).toFixed(2)}× (target ≥ 1×), batches vs addBulk ${(sluiceBatch / peerBatchRate).toFixed(2)}× (target ≥ 2×).`;
  },
};

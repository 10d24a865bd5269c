/**
 * The atomicity claim tested with real processes: 4 processes × 200 concurrent checks on one
 * subject admit exactly `limit` in total, on standalone Redis and on the cluster, with every log
 * encoding (test/limiter/log-encodings.ts). Each child
 * (race-child.ts) connects, reports `ready`, and fires its burst when the parent says `go`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { describeWith, servers } from '../support/servers.js';
import { LOG_ENCODINGS, type LogEncoding } from './log-encodings.js';

const CHILD = fileURLToPath(new URL('./race-child.ts', import.meta.url));
const PROCESSES = 4;
const CHECKS = 200;
const WINDOW_MS = 60_000;
const LIMIT = 50;

interface Racer {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  result: Promise<{ admitted: number; denied: number }>;
}

function startRacer(target: string, prefix: string, subject: string, encoding: LogEncoding): Racer {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, target, prefix, subject, String(CHECKS), String(WINDOW_MS), String(LIMIT), String(encoding.packedLogMax)],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line === 'ready') resolve();
    });
    void exited.then((code) => reject(new Error(`race child exited (${code}) before ready: ${stderr}`)));
  });
  const result = new Promise<{ admitted: number; denied: number }>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith('{')) resolve(JSON.parse(line));
    });
    void exited.then((code) => reject(new Error(`race child exited (${code}) without a result: ${stderr}`)));
  });
  return { child, ready, result };
}

async function race(target: string, encoding: LogEncoding, cleanup: (prefix: string) => Promise<void>): Promise<void> {
  const prefix = `test:race:${randomUUID().slice(0, 8)}`;
  const subject = `race:${randomUUID()}`;
  const racers = Array.from({ length: PROCESSES }, () => startRacer(target, prefix, subject, encoding));
  try {
    await Promise.all(racers.map((racer) => racer.ready));
    for (const racer of racers) racer.child.stdin.write('go\n');
    const results = await Promise.all(racers.map((racer) => racer.result));
    expect(results.reduce((sum, result) => sum + result.admitted + result.denied, 0)).toBe(PROCESSES * CHECKS);
    expect(results.reduce((sum, result) => sum + result.admitted, 0)).toBe(LIMIT);
  } finally {
    for (const racer of racers) racer.child.kill();
    await cleanup(prefix);
  }
}

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'RedisStore race between processes (standalone)', () => {
  it.each(LOG_ENCODINGS)(
    `${PROCESSES} processes × ${CHECKS} concurrent checks on one subject admit exactly ${LIMIT} ($name)`,
    async (encoding) => {
      await race(servers.redisUrl!, encoding, async (prefix) => {
        const client = new Redis(servers.redisUrl!);
        const keys = await client.keys(`${prefix}:*`);
        if (keys.length > 0) await client.del(...keys);
        client.disconnect();
      });
    },
    30_000,
  );
});

describeWith(servers.redisCluster, 'SLUICE_TEST_REDIS_CLUSTER', 'RedisStore race between processes (cluster)', () => {
  it.each(LOG_ENCODINGS)(
    `${PROCESSES} processes × ${CHECKS} concurrent checks on one subject admit exactly ${LIMIT} ($name)`,
    async (encoding) => {
      const target = servers.redisCluster!.map(({ host, port }) => `${host}:${port}`).join(',');
      await race(target, encoding, async (prefix) => {
        const cluster = new Cluster(servers.redisCluster!);
        for (const node of cluster.nodes('master')) {
          const keys = await node.keys(`${prefix}:*`);
          for (const key of keys) await cluster.del(key);
        }
        cluster.disconnect();
      });
    },
    30_000,
  );
});

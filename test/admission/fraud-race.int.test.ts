/**
 * A prefix's velocity holds exactly across processes: 4 processes × 200 concurrent sends to one
 * number range (one 8-digit prefix, 30 an hour), each through the admission chain's `fraud` step
 * over its own Limiter on one Redis. Exactly 30 pass, and the prefix's log holds exactly those 30.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { fraudPrefixSubject } from '../../src/admission/subjects.js';
import { Limiter, RedisStore } from '../../src/limiter/index.js';
import { describeWith, servers } from '../support/servers.js';

const CHILD = fileURLToPath(new URL('./fraud-race-child.ts', import.meta.url));
const PROCESSES = 4;
const OPS = 200;

function startRacer(prefix: string, tenant: string, id: number) {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, servers.redisUrl!, prefix, tenant, String(OPS), String(id)],
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
  const result = new Promise<{ passed: number; refused: number }>((resolve, reject) => {
    lines.on('line', (line) => line.startsWith('{') && resolve(JSON.parse(line)));
    void exited.then((code) => reject(new Error(`race child exited (${code}) without a result: ${stderr}`)));
  });
  return { child, ready, result };
}

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'SMS pumping protection across processes', () => {
  it('4 processes × 200 sends to one range: exactly the prefix limit (30) pass', async () => {
    const prefix = `test:fraudrace:${randomUUID().slice(0, 8)}`;
    const tenant = `T${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const racers = Array.from({ length: PROCESSES }, (_, id) => startRacer(prefix, tenant, id));
    const client = new Redis(servers.redisUrl!);
    try {
      await Promise.all(racers.map((racer) => racer.ready));
      for (const racer of racers) racer.child.stdin.write('go\n');
      const results = await Promise.all(racers.map((racer) => racer.result));
      expect(results.reduce((sum, result) => sum + result.passed, 0)).toBe(30);
      expect(results.reduce((sum, result) => sum + result.refused, 0)).toBe(PROCESSES * OPS - 30);
      const limiter = new Limiter({ store: new RedisStore({ client, prefix, keySecret: 'race' }) });
      const after = await limiter.peek({ subject: fraudPrefixSubject(tenant, '44740012'), rules: [{ windowMs: 3_600_000, limit: 30 }] });
      expect(after.counts).toEqual([30]);
    } finally {
      for (const racer of racers) racer.child.kill();
      const keys = await client.keys(`${prefix}*`);
      if (keys.length) await client.del(...keys);
      client.disconnect();
    }
  }, 60_000);
});

/**
 * Redis instructions per limiter decision, counted by callgrind: repeatable where CPU time on a
 * shared machine is not. Starts `redis-server` under `valgrind --tool=callgrind` with
 * instrumentation off, warms each case, then counts the server's instructions over 10,000
 * decisions (200 in flight, so the store batches as in the benchmark) and divides.
 *
 * Usage: `npx tsx bench/support/limiter-instructions.ts [case prefix] [entries per subject]`
 * (cases: packed, packed ids, sorted set, sorted set ids, sliding-counter, fixed-window, token-bucket, banned,
 * RateLimiterRedis; default all, 50).
 * Needs valgrind and callgrind_control on PATH; writes callgrind files under $TMPDIR/limiter-cg.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { Limiter, RedisStore, type Rule } from '../../src/limiter/index.js';

const SUBJECTS = 1_000;
const MEASURED = 10_000;
const IN_FLIGHT = 200;
const LARGE: Rule[] = [
  { windowMs: 60_000, limit: 1_000_000, banMs: 600_000 },
  { windowMs: 3_600_000, limit: 1_000_000 },
  { windowMs: 86_400_000, limit: 1_000_000 },
];
const STRICT: Rule[] = [{ windowMs: 60_000, limit: 3, banMs: 600_000 }];
const subjects = Array.from({ length: SUBJECTS }, (_, index) => `bench:sms:+86138${String(index).padStart(8, '0')}`);

const only = process.argv[2] ?? '';
const warmEntries = Number(process.argv[3] ?? 50);
const folder = join(tmpdir(), 'limiter-cg');
rmSync(folder, { recursive: true, force: true });
mkdirSync(folder, { recursive: true });

const port = 46_000 + Math.floor(Math.random() * 1_000);
const server = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${join(folder, 'out.%p')}`,
    'redis-server',
    '--port',
    String(port),
    '--save',
    '',
    '--appendonly',
    'no',
  ],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
let output = '';
server.stdout.on('data', (chunk: Buffer) => {
  output += chunk.toString();
});
while (!output.includes('Ready to accept')) await new Promise((resolve) => setTimeout(resolve, 200));
const pid = String(server.pid);
const control = (...args: string[]): void => {
  execFileSync('callgrind_control', [...args, pid], { stdio: 'ignore' });
};
const admin = new Redis(port);

async function burst(attempt: (index: number) => Promise<unknown>, from: number, count: number): Promise<void> {
  for (let index = 0; index < count; index += IN_FLIGHT) {
    await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) => attempt(from + index + j)));
  }
}

/** Instructions of the server per decision over MEASURED decisions, after `warm` of them. */
async function count(name: string, attempt: (index: number) => Promise<unknown>, warm: number): Promise<void> {
  await burst(attempt, 0, warm);
  control('-z');
  control('-i', 'on');
  await burst(attempt, warm, MEASURED);
  control('-i', 'off');
  control('-d');
  const newest = readdirSync(folder)
    .map((file) => join(folder, file))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
  const totals = /^totals:\s*(\d+)/m.exec(readFileSync(newest, 'utf8'));
  console.log(`${name}: ${(Number(totals?.[1]) / MEASURED / 1_000).toFixed(1)}k instructions per decision`);
}

const cases: [string, number, boolean][] = [
  ['packed', 256, false],
  ['packed ids', 256, true],
  ['sorted set', 0, false],
  ['sorted set ids', 0, true],
];
try {
  for (const [label, packedLogMax, ids] of cases) {
    if (!label.startsWith(only)) continue;
    await admin.flushall();
    const client = new Redis(port);
    const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'b', packedLogMax }) });
    let sequence = 0;
    await count(
      `sluice, ${label} (3 windows of 1e6, ${warmEntries} entries warm)`,
      (index) => limiter.check({ subject: subjects[index % SUBJECTS]!, rules: LARGE, requestId: ids ? `msg-${++sequence}` : undefined }),
      SUBJECTS * warmEntries,
    );
    client.disconnect();
  }
  // The counter algorithms: the same three windows (a token bucket of 1e6 per window), no log.
  for (const algorithm of ['sliding-counter', 'fixed-window', 'token-bucket'] as const) {
    if (!algorithm.startsWith(only)) continue;
    await admin.flushall();
    const client = new Redis(port);
    const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'b' }) });
    const rules = LARGE.map((rule) => ({ ...rule, algorithm }));
    await count(
      `sluice, ${algorithm} (3 windows of 1e6)`,
      (index) => limiter.check({ subject: subjects[index % SUBJECTS]!, rules }),
      SUBJECTS * 5,
    );
    client.disconnect();
  }
  if ('banned'.startsWith(only)) {
    await admin.flushall();
    const client = new Redis(port);
    const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'b' }) });
    await count(
      'sluice, banned (the batch MGET alone)',
      (index) => limiter.check({ subject: subjects[index % SUBJECTS]!, rules: STRICT }),
      SUBJECTS * 5,
    );
    client.disconnect();
  }
  if ('RateLimiterRedis'.startsWith(only)) {
    await admin.flushall();
    const client = new Redis(port);
    const peer = new RateLimiterRedis({ storeClient: client, keyPrefix: 'r', points: 1_000_000, duration: 60 });
    await count('RateLimiterRedis (fixed window of 1e6)', (index) => peer.consume(subjects[index % SUBJECTS]!), 2_000);
    client.disconnect();
  }
} finally {
  admin.disconnect();
  server.kill('SIGTERM');
}

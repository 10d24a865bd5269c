/**
 * The accept path's cost, alternated: sluice (Redis + SQLite, API role) beside the peer stack
 * (`bench/support/peer-stack.ts`), and beside another build of sluice when `BENCH_BASELINE_CLI`
 * names its `src/cli/main.ts` (a checkout of the build before a change). Every server runs for
 * the whole benchmark; each round measures each of them in turn, single sends then batches of
 * 100, so a machine whose other load comes and goes treats them alike. Rows are medians over
 * `BENCH_ROUNDS` rounds (default 3) after one uncounted warm-up round; the ratios are medians of
 * each round's ratio.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ADMIN,
  BATCH,
  load,
  loadBatch,
  peerStack,
  type Row,
  type Server,
  setUpTenant,
  startServer,
  stop,
  storedMessages,
} from './service.js';
import type { Benchmark } from './support/benchmark.js';
import { startPrivateRedis } from './support/redis-server.js';
import { formatCount, markdownTable } from './support/table.js';

/** `BENCH_SLUICE_CLI`: run "this build" from a frozen copy, so editing the tree meanwhile changes nothing. */
const thisBuild = process.env.BENCH_SLUICE_CLI ?? new URL('../src/cli/main.ts', import.meta.url).pathname;

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

interface Contender {
  name: string;
  server: Server;
  apiKey: string;
  /** Messages stored so far: the sluice database's rows, the peer's queue length. */
  stored: () => Promise<number>;
  single: Row[];
  batch: Row[];
}

export const benchmark: Benchmark = {
  name: 'accept-path',
  title: 'Accept path: CPU per accepted message, alternated rounds',
  async run(context) {
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    const baseline = process.env.BENCH_BASELINE_CLI;
    const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-accept-'));
    const redis = await startPrivateRedis();
    const { Redis } = await import('ioredis');
    const queue = new Redis(redis.url);
    const contenders: Contender[] = [];
    try {
      const builds = [
        ...(baseline ? [{ name: 'sluice, baseline build', cli: baseline }] : []),
        { name: 'sluice, this build', cli: thisBuild },
      ];
      for (const [index, build] of builds.entries()) {
        context.progress(`starting ${build.name}`);
        const db = join(dir, `${index}.db`);
        const server = await startServer(build.cli, ['serve'], {
          SLUICE_ROLES: 'api',
          SLUICE_ADMIN_TOKEN: ADMIN,
          SLUICE_LOG_LEVEL: 'warn',
          SLUICE_DB_URL: `sqlite:${db}`,
          SLUICE_SECRET_KEY_FILE: join(dir, `${index}.key`),
          SLUICE_REDIS_URL: redis.url,
          SLUICE_REDIS_KEY_PREFIX: `b${index}:`,
        });
        contenders.push({
          name: build.name,
          server,
          apiKey: await setUpTenant(server.base),
          stored: () => storedMessages(db),
          single: [],
          batch: [],
        });
      }
      context.progress('starting the peer stack');
      const peer = await startServer(peerStack, [], { REDIS_URL: redis.url });
      contenders.push({
        name: 'peer stack',
        server: peer,
        apiKey: 'x',
        stored: () => queue.llen('bull:messages:wait'),
        single: [],
        batch: [],
      });

      // Round 0 warms every server up (its JIT, its heap's size under this load) and is not counted.
      for (let round = 0; round <= rounds; round++) {
        for (const contender of contenders) {
          context.progress(`round ${round}: ${contender.name}, single sends`);
          const row = await load(contender.name, contender.server, contender.apiKey, context.seconds);
          if (round > 0) contender.single.push(row);
        }
        for (const contender of contenders) {
          context.progress(`round ${round}: ${contender.name}, batches of ${BATCH}`);
          const row = await loadBatch(contender.name, contender.server, contender.apiKey, context.seconds, contender.stored);
          if (round > 0) contender.batch.push(row);
        }
      }
    } finally {
      for (const contender of contenders) {
        if (contender.name === 'peer stack') contender.server.child.kill('SIGKILL');
        else await stop(contender.server);
      }
      queue.disconnect();
      await redis.stop();
    }

    const rows = contenders.flatMap((contender) =>
      (['single', 'batch'] as const).map((kind) => {
        const measured = contender[kind];
        return [
          `${contender.name}, ${kind === 'single' ? 'single sends' : `batches of ${BATCH}`}`,
          formatCount(median(measured.map((row) => row.accepted))),
          median(measured.map((row) => row.cpuPerMessage)).toFixed(0),
          measured.map((row) => row.cpuPerMessage.toFixed(0)).join(' / '),
          String(measured.reduce((sum, row) => sum + row.non2xx, 0)),
        ];
      }),
    );
    const table = markdownTable(
      [
        { header: 'server, load' },
        { header: 'accepted/s (median)', align: 'right' },
        { header: 'server CPU µs/msg (median)', align: 'right' },
        { header: 'µs/msg per round', align: 'right' },
        { header: 'non-2xx', align: 'right' },
      ],
      rows,
    );
    const ours = contenders.find((contender) => contender.name === 'sluice, this build')!;
    const peer = contenders.find((contender) => contender.name === 'peer stack')!;
    const ratio = (a: Row[], b: Row[]) => median(a.map((row, index) => row.accepted / b[index]!.accepted));
    const lines = [
      `single sends ÷ the peer stack's queue.add: ${ratio(ours.single, peer.single).toFixed(2)}× (target ≥ 1×)`,
      `batch of ${BATCH} ÷ single sends: ${ratio(ours.batch, ours.single).toFixed(2)}× (target ≥ 5×)`,
      `batch ÷ the peer stack's addBulk: ${ratio(ours.batch, peer.batch).toFixed(2)}× (target ≥ 2×)`,
    ];
    const before = contenders.find((contender) => contender.name === 'sluice, baseline build');
    if (before) {
      const change = (kind: 'single' | 'batch') =>
        median(ours[kind].map((row, index) => row.cpuPerMessage / before[kind][index]!.cpuPerMessage - 1)) * 100;
      lines.push(
        `server CPU per accepted message, this build vs the baseline (median of the rounds' changes): single sends ${change('single').toFixed(0)} %, batches ${change('batch').toFixed(0)} % (target for single sends: −30 %)`,
      );
    }
    return `${rounds} rounds after an uncounted warm-up round, ${context.seconds} s per measured row after a warm-up; in each round every server is measured in turn (single sends over 100 connections, then batches of ${BATCH} over 10). Redis + SQLite, API role, the seed's three rules, distinct recipients.\n\n${table}\n\n${lines.map((line) => `- ${line}`).join('\n')}`;
  },
};

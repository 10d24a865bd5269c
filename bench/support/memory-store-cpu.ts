/**
 * CPU per decision of MemoryStore against RateLimiterMemory, the rows behind the benchmark's
 * in-memory table, in alternated rounds: 10,000 subjects at random, strict and large limits, with
 * and without request ids, a sequential loop and a closed loop of 200 in flight.
 *
 *   node --expose-gc --import tsx bench/support/memory-store-cpu.ts
 *
 * `BENCH_SECONDS` (default 3) per row after 1 s of warm-up, `BENCH_ROUNDS` (default 3) rounds,
 * each in a different row order; the table gives each row's median µs. `BENCH_BASELINE=<dir>` adds
 * the rows of another build's `src/limiter` (e.g. one exported with `git archive <rev> src/limiter
 * | tar -x -C <dir>`), for before and after in one run. For a profile, add `--cpu-prof`.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import * as current from '../../src/limiter/index.js';
import { type Attempt, closedLoop, sequentialLoop } from './load.js';
import { describeMachine, machineInfo } from './machine.js';
import { markdownTable } from './table.js';

type LimiterModule = Pick<typeof current, 'Limiter' | 'MemoryStore'>;
type Limits = 'strict' | 'large';
type Loop = 'sequential' | 'closed';

const SUBJECTS = 10_000;
const IN_FLIGHT = 200;
const subjects = Array.from({ length: SUBJECTS }, (_, index) => `bench:sms:+86138${String(index).padStart(8, '0')}`);
const randomSubject = (): string => subjects[Math.floor(Math.random() * SUBJECTS)]!;
const rulesOf = (limits: Limits): current.Rule[] => {
  const limit = (strict: number): number => (limits === 'strict' ? strict : 1_000_000);
  return [
    { windowMs: 60_000, limit: limit(3), banMs: 600_000 },
    { windowMs: 3_600_000, limit: limit(10) },
    { windowMs: 86_400_000, limit: limit(50) },
  ];
};

interface Contender {
  name: string;
  limits: Limits;
  create(): { attempt: Attempt; close(): Promise<void> };
}

function sluice(module: LimiterModule, build: string, limits: Limits, ids: boolean): Contender {
  return {
    name: `sluice MemoryStore${ids ? ', request ids' : ''}${build}`,
    limits,
    create: () => {
      const store = new module.MemoryStore();
      const limiter = new module.Limiter({ store });
      const rules = rulesOf(limits);
      let sequence = 0;
      const attempt: Attempt = ids
        ? () => limiter.check({ subject: randomSubject(), rules, requestId: `msg-${++sequence}` }).then((d) => d.allowed)
        : () => limiter.check({ subject: randomSubject(), rules }).then((d) => d.allowed);
      return { attempt, close: () => store.close() };
    },
  };
}

function peer(limits: Limits): Contender {
  return {
    name: 'RateLimiterMemory',
    limits,
    create: () => {
      const limiter = new RateLimiterMemory({ points: limits === 'strict' ? 3 : 1_000_000, duration: 60 });
      const attempt: Attempt = () =>
        limiter.consume(randomSubject()).then(
          () => true,
          (reason: unknown) => {
            if (reason instanceof RateLimiterRes) return false;
            throw reason;
          },
        );
      return { attempt, close: async () => {} };
    },
  };
}

async function measure(contender: Contender, loop: Loop, seconds: number): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const instance = contender.create();
  const run = (durationMs: number) =>
    loop === 'closed'
      ? closedLoop(instance.attempt, { inFlight: IN_FLIGHT, durationMs })
      : sequentialLoop(instance.attempt, { durationMs });
  try {
    await run(1_000);
    const before = process.cpuUsage();
    const result = await run(seconds * 1_000);
    const cpu = process.cpuUsage(before);
    if (result.failures) throw new Error(`${contender.name}: ${result.failures} failures`, { cause: result.firstFailure });
    return (cpu.user + cpu.system) / result.decisions;
  } finally {
    await instance.close();
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const builds: [LimiterModule, string][] = [[current, '']];
if (process.env.BENCH_BASELINE) {
  const url = pathToFileURL(resolve(process.env.BENCH_BASELINE, 'src/limiter/index.ts')).href;
  builds.unshift([(await import(url)) as LimiterModule, ' (baseline)']);
}
const contenders: Contender[] = [];
for (const limits of ['strict', 'large'] as const) {
  for (const ids of [true, false]) for (const [module, build] of builds) contenders.push(sluice(module, build, limits, ids));
  contenders.push(peer(limits));
}
const rows = (['sequential', 'closed'] as const).flatMap((loop) =>
  contenders.map((contender) => ({ contender, loop, micros: [] as number[] })),
);
for (let round = 0; round < rounds; round++) {
  // Each round starts at a different row and alternates direction, so no row always follows the same one.
  const order = rows.map((_, index) => (index * (round % 2 ? -1 : 1) + round * 3 + rows.length * 2) % rows.length);
  for (const index of order) {
    const row = rows[index]!;
    const micros = await measure(row.contender, row.loop, seconds);
    row.micros.push(micros);
    process.stderr.write(`[round ${round + 1}] ${row.contender.name}, ${row.contender.limits}, ${row.loop}: ${micros.toFixed(2)} µs\n`);
  }
}
const peerMicros = (limits: Limits, loop: Loop): number =>
  median(rows.find((r) => r.contender.name === 'RateLimiterMemory' && r.contender.limits === limits && r.loop === loop)!.micros);
const table = markdownTable(
  [
    { header: 'limiter' },
    { header: 'limits' },
    { header: 'loop' },
    { header: 'CPU µs/decision (median)', align: 'right' },
    { header: 'rounds', align: 'right' },
    { header: 'vs RateLimiterMemory (CPU)', align: 'right' },
  ],
  rows.map(({ contender, loop, micros }) => [
    contender.name,
    contender.limits,
    loop === 'closed' ? `${IN_FLIGHT} in flight` : 'sequential',
    median(micros).toFixed(2),
    micros.map((m) => m.toFixed(2)).join(', '),
    `${(peerMicros(contender.limits, loop) / median(micros)).toFixed(2)}×`,
  ]),
);
process.stdout.write(
  `Machine: ${describeMachine(machineInfo())}\n\nCommand: \`BENCH_SECONDS=${seconds} BENCH_ROUNDS=${rounds}` +
    `${process.env.BENCH_BASELINE ? ' BENCH_BASELINE=…' : ''} node --expose-gc --import tsx bench/support/memory-store-cpu.ts\`\n\n${table}\n`,
);

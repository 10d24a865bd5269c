/**
 * `npm run bench [-- name ...]`: runs every benchmark in bench/*.ts (each exports `benchmark`),
 * or only those whose name contains one of the arguments, e.g. `npx tsx bench/run.ts limiter`.
 * Results go to stdout in markdown, ready for docs/benchmarks.md; progress goes to stderr.
 * `BENCH_SECONDS` sets the measured seconds per row (default 10; 1–2 for a smoke run).
 */
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BenchContext, type Benchmark, benchSeconds } from './support/benchmark.js';
import { describeMachine, machineInfo } from './support/machine.js';

const benchDir = dirname(fileURLToPath(import.meta.url));

function isBenchmark(value: unknown): value is Benchmark {
  const candidate = value as Partial<Benchmark> | undefined;
  return typeof candidate?.name === 'string' && typeof candidate.title === 'string' && typeof candidate.run === 'function';
}

async function loadBenchmarks(): Promise<Benchmark[]> {
  const files = (await readdir(benchDir)).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && file !== 'run.ts').sort();
  const benchmarks: Benchmark[] = [];
  for (const file of files) {
    const module: { benchmark?: unknown } = await import(pathToFileURL(join(benchDir, file)).href);
    if (!isBenchmark(module.benchmark)) throw new Error(`bench/${file} must export \`benchmark: Benchmark\` (bench/support/benchmark.ts)`);
    benchmarks.push(module.benchmark);
  }
  return benchmarks;
}

async function main(filters: string[]): Promise<void> {
  const all = await loadBenchmarks();
  const selected = filters.length === 0 ? all : all.filter((b) => filters.some((filter) => b.name.includes(filter)));
  if (selected.length === 0) {
    throw new Error(`no benchmark matches ${filters.join(', ')}; known: ${all.map((b) => b.name).join(', ')}`);
  }
  const context: BenchContext = {
    seconds: benchSeconds(),
    machine: machineInfo(),
    progress: (line) => process.stderr.write(`[bench] ${line}\n`),
  };
  const command = `BENCH_SECONDS=${context.seconds} npm run bench${filters.length ? ` -- ${filters.join(' ')}` : ''}`;
  process.stdout.write(`Machine: ${describeMachine(context.machine)}\n\nCommand: \`${command}\`\n`);
  for (const benchmark of selected) {
    context.progress(`${benchmark.name}: starting (${context.seconds} s per row)`);
    const body = await benchmark.run(context);
    process.stdout.write(`\n## ${benchmark.title}\n\n${body.trim()}\n`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

/**
 * The shape of a benchmark module: bench/run.ts imports every `bench/*.ts` file (but itself) and
 * runs the `benchmark` each exports, in file-name order, filtered by the names given on the
 * command line.
 */
import type { MachineInfo } from './machine.js';

export interface BenchContext {
  /** Measured seconds per row: `BENCH_SECONDS`, default 10. */
  seconds: number;
  machine: MachineInfo;
  /** Progress for the operator, on stderr (stdout carries only the results in markdown). */
  progress(line: string): void;
}

export interface Benchmark {
  /** Short name matched by the CLI filter, e.g. `limiter`. */
  name: string;
  /** Heading of its section in docs/benchmarks.md, e.g. `Limiter`. */
  title: string;
  /** Runs and returns the section body in markdown (without its heading). */
  run(context: BenchContext): Promise<string>;
}

/** `BENCH_SECONDS` as a positive number, default 10. */
export function benchSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BENCH_SECONDS;
  if (raw === undefined || raw === '') return 10;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new RangeError(`BENCH_SECONDS must be a positive number, got ${raw}`);
  return seconds;
}

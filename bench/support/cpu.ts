/**
 * CPU spent during a measured span, by this Node process and by a Redis server, in percent of
 * one core. Whichever is near 100 % bounds the throughput (Node and Redis are both single-threaded
 * where it matters); neither near 100 % means latency or the machine's other load bounds it.
 * CPU time per decision is the steadier figure on a shared machine: throughput falls when other
 * processes take the cores, the work each decision needs changes much less.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { infoField } from './machine.js';

/** What a CPU meter needs of an ioredis client. */
export interface InfoClient {
  info(section: string): Promise<string>;
}

export interface CpuUsage {
  /** CPU time of the Node process (user + system) over the span, in microseconds. */
  nodeMicros: number;
  /** CPU time of the Redis server over the span, in microseconds; undefined without Redis. */
  redisMicros: number | undefined;
  /** Node process (user + system), percent of one core over the span. */
  nodePercent: number;
  /** Redis server (used_cpu_user + used_cpu_sys), percent of one core; undefined without Redis. */
  redisPercent: number | undefined;
}

async function redisCpuSeconds(client: InfoClient): Promise<number> {
  const info = await client.info('cpu');
  return Number(infoField(info, 'used_cpu_user') ?? Number.NaN) + Number(infoField(info, 'used_cpu_sys') ?? Number.NaN);
}

/** Starts measuring; the returned function ends the span and reports it. */
export async function startCpuMeter(redis?: InfoClient): Promise<() => Promise<CpuUsage>> {
  const redisStart = redis ? await redisCpuSeconds(redis) : 0;
  const nodeStart = process.cpuUsage();
  const wallStart = process.hrtime.bigint();
  return async () => {
    const node = process.cpuUsage(nodeStart);
    const wallUs = Number(process.hrtime.bigint() - wallStart) / 1_000;
    const redisMicros = redis ? ((await redisCpuSeconds(redis)) - redisStart) * 1e6 : undefined;
    const nodeMicros = node.user + node.system;
    return {
      nodeMicros,
      redisMicros,
      nodePercent: (nodeMicros / wallUs) * 100,
      redisPercent: redisMicros === undefined ? undefined : (redisMicros / wallUs) * 100,
    };
  };
}

/**
 * CPU time (user + system, every thread) another process on this machine has used so far, in
 * microseconds: `/proc/<pid>/stat`'s utime + stime, the figure that process's own
 * `process.cpuUsage()` reports (both are its rusage), read from outside so a server under test
 * needs no extra endpoint. Linux only; resolution one clock tick (10 ms), so spans of seconds.
 */
export function processCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1e6;
}

/** `getconf CLK_TCK`: 100 on every Linux Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time of a PostgreSQL server so far, in microseconds: its postmaster (and the backends it
 * has reaped: cutime + cstime) plus every live child (backends, WAL writer, checkpointer…).
 * `dataDir` holds `postmaster.pid`. Linux only, as {@link processCpuMicros}.
 */
export function postgresCpuMicros(dataDir: string): number {
  const postmaster = Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
  const fieldsOf = (pid: number | string) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  const own = fieldsOf(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = fieldsOf(entry);
      if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Exited meanwhile.
    }
  }
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1e6;
}

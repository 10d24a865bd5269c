/**
 * A private nats-server with JetStream for one benchmark run: on a free loopback port, its store
 * in a temp folder, and its CPU time read from /proc (Linux), so a row can report the broker's
 * CPU per message beside sluice's and Redis's. The binary is `SLUICE_TEST_NATS_BIN`, else
 * `nats-server` on PATH.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivateNats {
  readonly url: string;
  /** CPU time (user + system) the server used since it started, in microseconds. */
  cpuMicros(): number;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** utime + stime of a process from /proc/PID/stat, in microseconds. */
function processCpuMicros(pid: number, ticksPerSecond: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, so split after its closing parenthesis).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / ticksPerSecond;
}

function whenReady(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let output = '';
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server is ready')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const binary = process.env.SLUICE_TEST_NATS_BIN || 'nats-server';
  const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const storeDir = mkdtempSync(join(tmpdir(), 'sluice-bench-nats-'));
    const child = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], { stdio: ['ignore', 'ignore', 'pipe'] });
    const killOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
      rmSync(storeDir, { recursive: true, force: true });
    };
    if (!(await whenReady(child, 10_000))) {
      await stop();
      continue;
    }
    child.stderr?.resume();
    const pid = child.pid as number;
    return { url: `nats://127.0.0.1:${port}`, cpuMicros: () => processCpuMicros(pid, ticksPerSecond), stop };
  }
  throw new Error(`could not start ${binary}`);
}

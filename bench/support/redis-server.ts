/**
 * A private redis-server for one benchmark run: on a free loopback port, without persistence,
 * so a benchmark may FLUSHALL and measure its CPU without disturbing (or being disturbed by)
 * anything else. The binary is `SLUICE_TEST_REDIS_BIN`, else `redis-server` on PATH.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
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

/** Resolves once the server logs that it accepts connections; rejects with its output if it exits first. */
function whenReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => done(new Error(`redis-server not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) done();
    };
    const onExit = (code: number | null): void => done(new Error(`redis-server exited (${code}) before it was ready:\n${output}`));
    const onError = (error: Error): void => done(error);
    function done(error?: Error): void {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      if (error) reject(error);
      else resolve();
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Starts a private server; retries on another port when the chosen one was taken meanwhile. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const binary = process.env.SLUICE_TEST_REDIS_BIN || 'redis-server';
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'notice'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    // Never outlive the benchmark, even when it crashes.
    const killOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    try {
      await whenReady(child, 10_000);
    } catch (error) {
      lastError = error;
      await stopChild(child);
      process.off('exit', killOnExit);
      continue;
    }
    child.stdout?.resume();
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      stop: async () => {
        await stopChild(child);
        process.off('exit', killOnExit);
      },
    };
  }
  throw new Error(`could not start ${binary}: ${String(lastError)}`);
}

/**
 * A redis-server of the test's own (SLUICE_TEST_REDIS_BIN) on a free loopback port, for tests that
 * FLUSHALL or otherwise must not touch the shared servers. Stop it with `stop()` in afterAll.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from './net.js';

export interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export const privateRedisBin = process.env.SLUICE_TEST_REDIS_BIN || undefined;

/**
 * Starts redis-server on `port` (no persistence) and resolves the process once it accepts
 * connections, or undefined if it exited or did not get ready within 10 s (e.g. the port was taken).
 */
export async function spawnRedisServer(bin: string, port: number, extraArgs: readonly string[] = []): Promise<ChildProcess | undefined> {
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = await new Promise<boolean>((resolve) => {
    let output = '';
    const timer = setTimeout(() => resolve(false), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!ready) {
    child.kill('SIGKILL');
    return undefined;
  }
  // Keep draining its output so a chatty server never blocks on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** `extraArgs`: more redis-server options, e.g. `['--rename-command', 'CONFIG', '']`. */
export async function startPrivateRedis(bin = privateRedisBin, extraArgs: readonly string[] = []): Promise<PrivateRedis> {
  if (bin === undefined) throw new Error('SLUICE_TEST_REDIS_BIN is not set');
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const child = await spawnRedisServer(bin, port, extraArgs);
    if (child) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop: async () => {
          if (child.exitCode !== null) return;
          const exited = once(child, 'exit');
          child.kill('SIGKILL');
          await exited;
        },
      };
    }
    // The port was taken between the probe and the bind: try another.
  }
  throw new Error('could not start a private redis-server');
}

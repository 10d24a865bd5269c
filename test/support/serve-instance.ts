/**
 * `sluice serve` as a real child process (tsx, on a port of its own choosing), for the tests that
 * kill instances mid-stream: its last output lines are kept for the failure message.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;

export interface Instance {
  roles: string;
  child: ChildProcess;
  /** The last 50 chunks of its stdout and stderr. */
  output: string[];
}

/** Starts `sluice serve` with `env` and `SLUICE_ROLES=roles`, logging warnings and worse. */
export function startInstance(env: Record<string, string>, roles: string): Instance {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'serve'], {
    env: { ...process.env, ...env, SLUICE_ROLES: roles, SLUICE_HOST: '127.0.0.1', SLUICE_PORT: '0', SLUICE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const instance: Instance = { roles, child, output: [] };
  const keep = (chunk: Buffer) => {
    instance.output.push(chunk.toString());
    if (instance.output.length > 50) instance.output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return instance;
}

/** SIGKILL (no goodbye), and wait for the exit; a no-op for one already gone. */
export async function killInstance(instance: Instance): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  const exited = once(instance.child, 'exit');
  instance.child.kill('SIGKILL');
  await exited;
}

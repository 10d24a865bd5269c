/**
 * `sluice serve` as a real child process (tsx), for the tests about the process: probes, signals,
 * instances killed mid-stream. `startServer` starts one on a free port and resolves once /healthz
 * answers; its last output lines are kept for failure messages.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from './net.js';
import { until } from './wait.js';

/** src/cli/main.ts, the `sluice` executable's source. */
export const cliPath = new URL('../../src/cli/main.ts', import.meta.url).pathname;
/** `node ...cliArgs ARGS` runs `sluice ARGS` from any working folder (tsx found by its path, not from the folder). */
export const cliArgs = ['--import', new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href, cliPath];

export interface Instance {
  roles: string;
  child: ChildProcess;
  /** The last 50 chunks of its stdout and stderr. */
  output: string[];
}

export interface Server extends Instance {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
}

export interface ServeOptions {
  /** SLUICE_ROLES; default `api,worker`. */
  roles?: string;
  /** More arguments after `serve` (`--demo`). */
  args?: string[];
  cwd?: string;
  /** Only these variables (plus PATH), instead of the test process's environment under `env`. */
  isolated?: boolean;
  /** How long it may take to answer /healthz; default 90 s (tsx on a loaded machine). */
  timeoutMs?: number;
}

/** Starts `sluice serve` with `env` and `SLUICE_ROLES=roles` on SLUICE_PORT (0 unless `env` names one), logging warnings and worse. */
export function startInstance(
  env: Record<string, string>,
  roles: string,
  options: Omit<ServeOptions, 'roles' | 'timeoutMs'> = {},
): Instance {
  const base = options.isolated ? { PATH: process.env.PATH ?? '' } : process.env;
  const child = spawn(process.execPath, [...cliArgs, 'serve', ...(options.args ?? [])], {
    env: { ...base, SLUICE_HOST: '127.0.0.1', SLUICE_PORT: '0', SLUICE_LOG_LEVEL: 'warn', ...env, SLUICE_ROLES: roles },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
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

/** Starts `sluice serve` on a free port (or `env.SLUICE_PORT`) and waits until /healthz answers 200; fails with its output if it exits first. */
export async function startServer(env: Record<string, string>, options: ServeOptions = {}): Promise<Server> {
  const port = env.SLUICE_PORT ? Number(env.SLUICE_PORT) : await freePort();
  const instance = startInstance({ ...env, SLUICE_PORT: String(port) }, options.roles ?? 'api,worker', options);
  const url = `http://127.0.0.1:${port}`;
  const gone = () => instance.child.exitCode !== null || instance.child.signalCode !== null;
  try {
    // An exit ends the wait at once (its output says why), rather than at the timeout.
    await until(async () => gone() || (await fetch(`${url}/healthz`)).ok, {
      timeoutMs: options.timeoutMs ?? 90_000,
      intervalMs: 50,
      what: `sluice serve on ${url}`,
    });
    if (gone()) throw new Error(`sluice serve exited (${instance.child.exitCode ?? instance.child.signalCode}) before it was ready`);
  } catch (error) {
    await killInstance(instance);
    throw new Error(`${(error as Error).message}; its output:\n${instance.output.join('')}`, { cause: error });
  }
  return { ...instance, url, port };
}

/** SIGTERM (a graceful stop), and wait for the exit; a no-op for one already gone. */
export async function stopInstance(instance: Instance): Promise<void> {
  await signalAndWait(instance, 'SIGTERM');
}

/** SIGKILL (no goodbye), and wait for the exit; a no-op for one already gone. */
export async function killInstance(instance: Instance): Promise<void> {
  await signalAndWait(instance, 'SIGKILL');
}

async function signalAndWait(instance: Instance, signal: NodeJS.Signals): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  const exited = once(instance.child, 'exit');
  instance.child.kill(signal);
  await exited;
}

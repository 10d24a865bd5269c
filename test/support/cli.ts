/**
 * The `sluice` command line for tests. `sluice(args, env)` runs a command in this process: the
 * same program, the same one-line report of a failure and the same exit code as the executable,
 * without the seconds a new Node process with tsx spends loading the server's modules. Tests about
 * the process itself (`serve`, signals, the bin) spawn it: `node ...cliArgs ARGS`, or serve-instance.ts's `startServer`.
 */
import { format } from 'node:util';
import type { Command, CommanderError } from 'commander';
import { reportFailure } from '../../src/cli/failure.js';
import { createProgram } from '../../src/cli/program.js';

export { cliArgs, cliPath } from './serve-instance.js';

export interface CliResult {
  /** The exit code the executable would end with: 0, or 1 for a refusal. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Where commander would call process.exit (it has printed why): it throws this error instead, on every command of the tree. */
function withoutExit(command: Command, exits: Set<unknown>): Command {
  command.exitOverride((error) => {
    exits.add(error);
    throw error;
  });
  for (const sub of command.commands) withoutExit(sub, exits);
  return command;
}

/** Replaces the SLUICE_* variables of process.env with `env`'s; returns the undo. */
function useEnvironment(env: Record<string, string>): () => void {
  const saved = Object.entries(process.env).filter(([name]) => name.startsWith('SLUICE_'));
  for (const [name] of saved) delete process.env[name];
  Object.assign(process.env, env);
  return () => {
    for (const name of Object.keys(process.env)) if (name.startsWith('SLUICE_')) delete process.env[name];
    for (const [name, value] of saved) process.env[name] = value;
  };
}

let running = false;

/**
 * Runs `sluice ...args` in this process with `env` as its SLUICE_* settings (the test process's
 * own SLUICE_* variables are hidden meanwhile), capturing what it prints. One command at a time.
 */
export async function sluice(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  if (running) throw new Error('sluice(): one command at a time (it borrows process.env and the console)');
  running = true;
  const out: string[] = [];
  const err: string[] = [];
  const restoreEnvironment = useEnvironment(env);
  const saved = {
    log: console.log,
    info: console.info,
    warn: console.warn,
    error: console.error,
    stdout: process.stdout.write,
    stderr: process.stderr.write,
  };
  const capture =
    (into: string[]) =>
    (...values: unknown[]) => {
      into.push(`${format(...values)}\n`);
    };
  const captureWrite = (into: string[]) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
      const callback = rest.find((value) => typeof value === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  console.log = capture(out);
  console.info = capture(out);
  console.warn = capture(err);
  console.error = capture(err);
  process.stdout.write = captureWrite(out);
  process.stderr.write = captureWrite(err);
  let code = 0;
  const exits = new Set<unknown>();
  try {
    await withoutExit(createProgram(), exits).parseAsync(args, { from: 'user' });
  } catch (error) {
    // Commander's exit (a usage error, --help, --version): it has printed its message, and names the code.
    if (exits.has(error)) code = (error as CommanderError).exitCode;
    else {
      reportFailure(error);
      code = 1;
    }
  } finally {
    Object.assign(console, { log: saved.log, info: saved.info, warn: saved.warn, error: saved.error });
    process.stdout.write = saved.stdout;
    process.stderr.write = saved.stderr;
    restoreEnvironment();
    running = false;
  }
  return { code, stdout: out.join(''), stderr: err.join('') };
}

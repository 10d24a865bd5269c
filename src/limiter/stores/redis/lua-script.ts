/**
 * Loading and running the store's Lua scripts: each read once at module load, run by EVALSHA,
 * falling back to EVAL when the server answers NOSCRIPT (script caches vanish on restart,
 * failover, SCRIPT FLUSH, and are per node in a cluster). EVAL also caches the script on the
 * node that ran it, so the next EVALSHA there succeeds.
 *
 * The `.lua` sources sit in `scripts/` beside this module. `tsc` does not copy them to `dist/`,
 * so the loader looks next to the compiled module first and then in the package's `src/` tree
 * (`dist/limiter/stores/redis/` → `src/limiter/stores/redis/`); a build that copies
 * `src/limiter/stores/redis/scripts/*.lua` to `dist/limiter/stores/redis/scripts/` uses the first.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** What the store needs of an ioredis `Redis` or `Cluster`. */
export interface ScriptClient {
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

function scriptPath(file: string): string {
  const candidates = [
    new URL(`./scripts/${file}`, import.meta.url),
    new URL(`../../../../src/limiter/stores/redis/scripts/${file}`, import.meta.url),
  ];
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate);
    if (existsSync(path)) return path;
  }
  throw new Error(`Lua script ${file} not found next to ${fileURLToPath(import.meta.url)} nor in src/ (copy scripts/*.lua into dist/)`);
}

/** One Lua script: its source, its SHA1, and a runner with the NOSCRIPT fallback. */
export class LuaScript {
  readonly source: string;
  readonly sha: string;

  constructor(readonly name: string) {
    this.source = readFileSync(scriptPath(`${name}.lua`), 'utf8');
    this.sha = createHash('sha1').update(this.source).digest('hex');
  }

  /** Runs the script; `args` holds the keys first (`numKeys` of them), then ARGV. */
  async run(client: ScriptClient, numKeys: number, args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, numKeys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return client.eval(this.source, numKeys, ...args);
    }
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** The store's scripts, loaded once per process. */
export const scripts = {
  checkBatch: new LuaScript('check-batch'),
  undo: new LuaScript('undo-2'),
  ban: new LuaScript('ban-1'),
} as const;

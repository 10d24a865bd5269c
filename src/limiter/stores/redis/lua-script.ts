/**
 * Lua scripts run by EVALSHA, falling back to EVAL when the server answers NOSCRIPT (script caches
 * vanish on restart, failover, SCRIPT FLUSH, and are per node in a cluster). EVAL also caches the
 * script on the node that ran it, so the next EVALSHA there succeeds. Exported by the library so
 * the rest of sluice (locks, due index) runs its scripts the same way.
 *
 * Sources are `.lua` files read once at module load, their `--- @include` pieces joined
 * (./lua-source.ts): one script, one SHA, one EVALSHA. `npm run build` writes them joined next to
 * the compiled modules; when a `dist/` folder holds no copy, the same path under `src/` is used.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { joinLuaSource } from './lua-source.js';

/**
 * What a script needs of an ioredis `Redis` or `Cluster`. A `Cluster` routes the call by its first
 * key, so every key of one script must share a hash tag.
 */
export interface ScriptClient {
  evalsha(sha1: string, numkeys: number, ...keysAndArgs: (string | number | Buffer)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...keysAndArgs: (string | number | Buffer)[]): Promise<unknown>;
}

/** One Lua script: its name, source and SHA1, and a runner with the NOSCRIPT fallback. */
export class LuaScript {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Loads `<name>.lua` from a folder given as a file URL, e.g. `new URL('./scripts/', import.meta.url)`,
   * its includes joined.
   */
  static fromFile(folder: URL, name: string): LuaScript {
    const built = fileURLToPath(new URL(`${name}.lua`, folder));
    const source = built.replace(/([/\\])dist([/\\])(?!.*[/\\]dist[/\\])/, '$1src$2');
    if (!existsSync(built) && !existsSync(source)) throw new Error(`Lua script ${name}.lua not found in ${built} nor ${source}`);
    return new LuaScript(name, joinLuaSource(existsSync(built) ? built : source));
  }

  /**
   * This script run with `#!lua flags=allow-cross-slot-keys` (Redis 7 and later): on a cluster it
   * may then touch keys of any slot of the node it runs on, passed in ARGV (declared keys must
   * still share one slot).
   */
  crossSlot(): LuaScript {
    return new LuaScript(`${this.name} (per node)`, `#!lua flags=allow-cross-slot-keys\n${this.source}`);
  }

  /** Runs the script; `keysAndArgs` holds the keys first (`numKeys` of them), then ARGV. */
  async run(client: ScriptClient, numKeys: number, keysAndArgs: readonly (string | number | Buffer)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, numKeys, ...keysAndArgs);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return client.eval(this.source, numKeys, ...keysAndArgs);
    }
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

const folder = new URL('./scripts/', import.meta.url);

const checkBatch = LuaScript.fromFile(folder, 'check-batch');
const undo = LuaScript.fromFile(folder, 'undo-batch');

/** The store's scripts, loaded once per process. */
export const scripts = {
  checkBatch,
  undo,
  checkBatchPerNode: checkBatch.crossSlot(),
  undoPerNode: undo.crossSlot(),
  ban: LuaScript.fromFile(folder, 'ban-1'),
} as const;

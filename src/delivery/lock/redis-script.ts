/**
 * A Lua script run by EVALSHA with an EVAL fallback on `NOSCRIPT` (the ioredis `Script` pattern):
 * a script cache vanishes on restart, on failover and is empty on every other node of a cluster, so
 * the fallback is the normal path after any of those, not an error.
 *
 * Written for the delivery side (lock, due index) because `src/limiter/stores/redis/` had no loader
 * yet; once the limiter has one, delivery may import it from there (never the other way round).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The part of an ioredis client a script needs. Both `Redis` and `Cluster` fit; a `Cluster` routes
 * the call by its first key, so every key of one script must share a hash tag.
 */
export interface ScriptClient {
  evalsha(sha1: string, numkeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

export class RedisScript {
  readonly sha1: string;

  /** @param name for error messages; @param source the Lua text. */
  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha1 = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Loads `<name>.lua` from a folder given as a file URL (usually `new URL('./scripts/', import.meta.url)`).
   * `tsc` does not copy `.lua` files, so when the folder is under `dist/` and holds no copy, the
   * same path under `src/` is used.
   */
  static fromFile(folder: URL, name: string): RedisScript {
    const built = fileURLToPath(new URL(`${name}.lua`, folder));
    const source = built.replace(/([/\\])dist([/\\])(?!.*[/\\]dist[/\\])/, '$1src$2');
    const path = existsSync(built) ? built : source;
    return new RedisScript(name, readFileSync(path, 'utf8'));
  }

  async run(client: ScriptClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha1, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      // EVAL also caches the script on that node, so the next EVALSHA there succeeds.
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

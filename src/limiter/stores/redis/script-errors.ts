/**
 * The one table of negative codes the Lua scripts return, and the error each becomes.
 * A script returns a negative code instead of raising so the mapping lives in one place; a
 * denial is never one of these (it is a decision), these are failures.
 */
const SCRIPT_ERRORS: Readonly<Record<number, string>> = {
  [-1]: 'malformed script arguments (a bug in RedisStore or a script from another version)',
  [-2]: 'no free 32-bit member found in the sliding log (the log is corrupt or impossibly large)',
  [-3]: 'a key of the batch is not on the node the call reached (a stale cluster slot map; RedisStore sends such a batch again per slot)',
};

/** The code of a per-node batch that reached a node missing one of its slots (nothing was written). */
export const STALE_SLOT_MAP = -3;

/** A Lua script of the RedisStore returned a failure code. */
export class RedisScriptError extends Error {
  override readonly name = 'RedisScriptError';
  constructor(
    readonly script: string,
    readonly code: number,
  ) {
    super(`${script}: ${SCRIPT_ERRORS[code] ?? `unknown failure code ${code}`}`);
  }
}

/** Throws the error a negative script result stands for; returns other results unchanged. */
export function throwIfScriptError<T>(script: string, result: T): T {
  if (typeof result === 'number' && result < 0) throw new RedisScriptError(script, result);
  if (Array.isArray(result) && result.length === 1 && typeof result[0] === 'number' && result[0] < 0) {
    throw new RedisScriptError(script, result[0]);
  }
  return result;
}

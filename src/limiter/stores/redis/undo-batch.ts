/**
 * The wire format of scripts/undo-batch.lua: many undos (of subjects on one node) encoded into one
 * EVALSHA. The script answers per undo whether its counter effects were applied; the store only
 * needs to know the call succeeded.
 */
import type { StoreUndo } from '../../types.js';
import { encodeRules } from './check-batch.js';
import type { SubjectKeys } from './keys.js';

/** One queued undo: the store's request as its caller passed it, and what the store derived from it. */
export interface PendingUndo {
  readonly request: StoreUndo;
  /** The subject's keys. */
  readonly keys: SubjectKeys;
  /** `RedisKeys.requestMember(requestId)`, the log member to take back; '' without a request id. */
  readonly requestMember: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Keys then ARGV of one undo-batch call; `perNode`: the keys go in ARGV behind one routing key (the
 * script's per-node form, for items of several slots of one cluster node).
 */
export function encodeUndos(
  items: readonly PendingUndo[],
  minTtlMs: number,
  perNode: boolean,
): { numKeys: number; args: (string | number)[] } {
  const args: (string | number)[] = perNode ? [items[0]!.keys.packed, 4 * items.length] : [];
  for (const item of items) args.push(item.keys.log, item.keys.counters, item.keys.scheduled, item.keys.packed);
  args.push(minTtlMs, items.length);
  for (const item of items) {
    args.push(item.requestMember, item.request.at);
    for (const value of encodeRules(item.request.rules)) args.push(value);
  }
  return { numKeys: perNode ? 1 : 4 * items.length, args };
}

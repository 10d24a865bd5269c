/** One subject's state in the in-process store, and the owner (tenant) it belongs to. */
import type { NormalizedRule } from '../../types.js';
import type { Counter } from './counters.js';
import { mayHold } from './request-ids.js';
import type { SubjectLog } from './subject-log.js';

export class SubjectState {
  log: SubjectLog | undefined;
  counters: Counter[] | undefined;
  /** End of the stored ban, in decision time; 0: none (a ban always ends after time 0). */
  banEnd = 0;
  /** Clock time at which the ban record is cleaned up (its TTL). */
  banDeadline = 0;
  /** Clock time from which nothing stored here can change a decision: the subject may be evicted. */
  deadline = 0;
  /** Latest count time admitted later than its decision time (RedisStore's `sch` key); -Infinity: none. */
  scheduled = Number.NEGATIVE_INFINITY;
  /** Clock time of the last check: the least recent of a sample is evicted first. */
  usedAt = 0;
  /** Place of {@link deadline} in the store's `Deadlines`. */
  sweepSlot = -1;
  /** Filter of the log's ids (`mayHold`, request-ids.ts): bits stay after trims and undos; cleared with the log. */
  idBitsLow = 0;
  idBitsHigh = 0;
  constructor(
    readonly subject: string,
    readonly owner: Owner,
  ) {}
}

/** The subjects of one owner, oldest first. */
export interface Owner {
  readonly name: string;
  readonly subjects: Set<SubjectState>;
}

/** Oldest subjects of an owner sampled for the least recently checked one (Redis's approximate LRU). */
const EVICTION_SAMPLE = 16;

/**
 * Step 1 without trimming: whether `requestId` is logged with a time the trim at `t` would keep
 * (> t − longest window), i.e. whether a check would find it after its trim.
 */
export function isRepeat(state: SubjectState, rules: readonly NormalizedRule[], requestId: string, t: number): boolean {
  const time = mayHold(state, requestId) ? state.log?.timeOf(requestId) : undefined;
  if (time === undefined) return false;
  let longest = 0;
  for (let index = 0; index < rules.length; index++) if (rules[index]!.windowMs > longest) longest = rules[index]!.windowMs;
  return time > t - longest;
}

/** The least recently checked of the owner's oldest subjects, one without a ban in force first; never a pinned one. */
export function leastRecent(owner: Owner, pinned: (subject: string) => boolean, now: number): SubjectState | undefined {
  let best: SubjectState | undefined;
  let bestBanned = true;
  let sampled = 0;
  for (const state of owner.subjects) {
    if (pinned(state.subject)) continue;
    const banned = state.banDeadline > now;
    if (!best || (bestBanned && !banned) || (banned === bestBanned && state.usedAt < best.usedAt)) {
      best = state;
      bestBanned = banned;
    }
    if (++sampled >= EVICTION_SAMPLE) break;
  }
  return best;
}

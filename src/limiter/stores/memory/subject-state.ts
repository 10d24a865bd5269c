/** One subject's state in the in-process store, and the owner (tenant) it belongs to. */
import type { Counter } from './counters.js';
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

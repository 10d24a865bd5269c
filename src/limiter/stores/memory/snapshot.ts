/**
 * A snapshot of the in-process store: what a process keeps across a restart (the embedded
 * default saves one in its database). It holds, for the subjects whose state still matters, the
 * ban in force, the sliding-log entries (with their request ids) and the fixed-window counts;
 * sliding-counter and token-bucket state (a second's or a minute's pacing) is not kept. Which
 * subjects a bounded snapshot keeps, bans first and each owner its share: snapshot-writer.ts.
 */
import { createCounter, type FixedWindowCounter } from './counters.js';
import { addToFilter } from './request-ids.js';
import { SubjectLog } from './subject-log.js';
import type { SubjectState } from './subject-state.js';

/** One subject in a snapshot; times are the store's (clock and decision times, epoch ms). */
export interface SnapshotSubject {
  /** The subject's key. */
  s: string;
  /** Clock time from which nothing kept here matters: it is not restored after it. */
  d: number;
  /** The ban: its end (decision time) and its cleanup (clock time). */
  b?: [number, number];
  /** Sliding-log entries, oldest first: [time, request id or null]. */
  l?: [number, string | null][];
  /** Fixed windows: [window ms, limit, window index, count]. */
  f?: [number, number, number, number][];
}

export interface MemorySnapshot {
  version: 1;
  /** Clock time it was taken. */
  takenAt: number;
  subjects: SnapshotSubject[];
}

/**
 * Puts `snapshot`'s subjects whose state still matters at clock time `now` into the store,
 * through `create` (the store's, which respects its size bound: undefined when full) and
 * `setDeadline` (which keeps the store's sweep in step). A subject
 * the store already holds is left alone. Returns how many were restored.
 */
export function restoreSnapshot(
  snapshot: MemorySnapshot,
  now: number,
  held: (subject: string) => boolean,
  create: (subject: string) => SubjectState | undefined,
  setDeadline: (state: SubjectState, deadline: number) => void,
): number {
  if (snapshot.version !== 1 || !Array.isArray(snapshot.subjects)) return 0;
  let restored = 0;
  for (const item of snapshot.subjects) {
    if (!(item.d > now) || held(item.s)) continue;
    const state = create(item.s);
    if (!state) break;
    setDeadline(state, item.d);
    if (item.b && item.b[1] > now) [state.banEnd, state.banDeadline] = item.b;
    if (item.l?.length) {
      state.log = new SubjectLog();
      for (const [time, id] of item.l) {
        state.log.insert(time, id ?? undefined);
        if (id !== null) addToFilter(state, id);
      }
      // An entry counted later than its decision (a scheduled send) is read as the store reads one.
      const newest = item.l[item.l.length - 1]![0];
      if (newest > now) state.scheduled = newest;
    }
    for (const [windowMs, limit, window, count] of item.f ?? []) {
      const counter = createCounter('fixed-window', windowMs, limit) as FixedWindowCounter;
      counter.window = window;
      counter.count = count;
      state.counters ??= [];
      state.counters.push(counter);
    }
    restored++;
  }
  return restored;
}

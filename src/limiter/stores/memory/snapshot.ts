/**
 * A snapshot of the in-process store: what a process keeps across a restart (the embedded
 * default saves one in its database). It holds, for the subjects whose state still matters, the
 * ban in force, the sliding-log entries (with their request ids) and the fixed-window counts;
 * sliding-counter and token-bucket state (a second's or a minute's pacing) is not kept. Banned
 * subjects come first, so a snapshot cut at its bound keeps the bans before the counts.
 */
import { createCounter, FixedWindowCounter } from './counters.js';
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
 * The snapshot of `states` at clock time `now`, at most `maxEntries` entries in all (a subject,
 * a log entry and a window count one each): subjects under a ban in force first, then the rest;
 * a log cut short keeps its newest entries.
 */
export function takeSnapshot(states: Iterable<SubjectState>, now: number, maxEntries: number): MemorySnapshot {
  const subjects: SnapshotSubject[] = [];
  let budget = maxEntries;
  const live = [...states].filter((state) => state.deadline > now);
  const banned = live.filter((state) => state.banDeadline > now);
  const others = live.filter((state) => !(state.banDeadline > now));
  for (const state of [...banned, ...others]) {
    if (budget <= 0) break;
    budget--;
    const subject: SnapshotSubject = { s: state.subject, d: state.deadline };
    if (state.banDeadline > now) subject.b = [state.banEnd, state.banDeadline];
    const windows = (state.counters ?? []).filter((counter): counter is FixedWindowCounter => counter instanceof FixedWindowCounter);
    const kept = windows
      .slice(0, budget)
      .map((counter): [number, number, number, number] => [counter.windowMs, counter.limit, counter.window, counter.count]);
    budget -= kept.length;
    if (kept.length > 0) subject.f = kept;
    if (state.log && state.log.size > 0 && budget > 0) {
      subject.l = state.log.newestEntries(budget);
      budget -= subject.l.length;
    }
    subjects.push(subject);
  }
  return { version: 1, takenAt: now, subjects };
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

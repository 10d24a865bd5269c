/**
 * Which subjects a snapshot keeps, and its JSON, written a slice at a time.
 *
 * The snapshot is bounded in entries and in bytes (its UTF-8 JSON, keys and request ids
 * included: a long or escaped key counts at its written size). Bans in force come first, then the
 * other subjects, each most recently checked first. Within each of the two, owners (tenants)
 * take turns by bytes (deficit round-robin, {@link QUANTUM} a turn), so an owner with many or long
 * subjects cannot push another's bans out: it fills only what the others leave. A subject that
 * does not fit what is left is left out; smaller ones after it may still go in.
 *
 * The work is a generator of small steps (`undefined` between them), so the serving process can
 * write the snapshot between requests ({@link writeSnapshotJson}) and a test can run it at once.
 */
import { FixedWindowCounter } from './counters.js';
import type { MemorySnapshot, SnapshotSubject } from './snapshot.js';
import type { Owner, SubjectState } from './subject-state.js';

/** The bounds of one snapshot. */
export interface SnapshotBounds {
  /** The most entries: a subject, each of its log entries and each fixed window count one. */
  maxEntries: number;
  /** The most bytes of its JSON (UTF-8); default: no bound but the entries'. */
  maxBytes?: number;
}

/** A snapshot written as JSON, and what it holds. */
export interface SnapshotText {
  /** The {@link MemorySnapshot}'s JSON. */
  body: string;
  /** Its length in UTF-8 bytes. */
  bytes: number;
  takenAt: number;
  /** Subjects kept, of them under a ban in force, and live subjects left out by the bounds. */
  subjects: number;
  bans: number;
  leftOut: number;
}

/** One subject written: its object and its JSON. */
interface Written {
  subject: SnapshotSubject;
  json: string;
  bytes: number;
  entries: number;
  banned: boolean;
}

/** Bytes of credit an owner gets per turn. */
const QUANTUM = 4096;
/** Subjects sorted in one step: runs of this many are merged lazily ({@link RecentFirst}). */
const RUN = 1024;
/** Subjects looked at between two steps (each written as JSON: 16 of 2 KB take about 0.1 ms). */
const STEP = 16;
/** Subjects' JSON joined into one string at a time, so that the body's final join is of few strings. */
const JOIN = 256;
/** The JSON around the subjects: `{"version":1,"takenAt":…,"subjects":[…]}`. */
const FRAME_BYTES = 64;

/**
 * The snapshot's subjects at clock time `now`, as steps: a {@link Written} subject, or undefined
 * where the caller may pause. `isCurrent` says whether a state is still the store's (one reset
 * during a paused write is not saved).
 */
export function* snapshotSteps(
  owners: Iterable<Owner>,
  now: number,
  bounds: SnapshotBounds,
  isCurrent: (state: SubjectState) => boolean,
): Generator<Written | undefined, { leftOut: number }> {
  const queues: OwnerQueue[] = [];
  let looked = 0;
  let live = 0;
  for (const owner of owners) {
    const banned: SubjectState[] = [];
    const others: SubjectState[] = [];
    for (const state of owner.subjects) {
      if (state.deadline > now) (state.banDeadline > now ? banned : others).push(state);
      if (++looked % (STEP * 16) === 0) yield;
    }
    live += banned.length + others.length;
    if (banned.length + others.length > 0) queues.push({ banned: new RecentFirst(banned), others: new RecentFirst(others), credit: 0 });
  }
  for (const queue of queues) {
    yield* queue.banned.prepare();
    yield* queue.others.prepare();
  }
  const budget = { entries: bounds.maxEntries, bytes: (bounds.maxBytes ?? Number.POSITIVE_INFINITY) - FRAME_BYTES };
  let kept = 0;
  for (const tier of ['banned', 'others'] as const) {
    let active = queues.filter((queue) => queue[tier].size > 0);
    for (const queue of active) queue.credit = 0;
    while (active.length > 0 && budget.entries > 0 && budget.bytes > 0) {
      const next: OwnerQueue[] = [];
      for (const queue of active) {
        const source = queue[tier];
        queue.credit += QUANTUM;
        while (budget.entries > 0 && budget.bytes > 0) {
          if (++looked % STEP === 0) yield;
          if (!queue.pending) {
            const state = source.next();
            if (!state) break;
            if (!isCurrent(state) || !(state.deadline > now)) continue;
            queue.pending = write(state, now, budget.entries);
          }
          const item = queue.pending;
          // One that does not fit what is left (`,` included) is left out; a smaller one may still fit.
          if (item.bytes + 1 > budget.bytes || item.entries > budget.entries) {
            queue.pending = undefined;
            continue;
          }
          if (item.bytes + 1 > queue.credit) break;
          queue.pending = undefined;
          queue.credit -= item.bytes + 1;
          budget.bytes -= item.bytes + 1;
          budget.entries -= item.entries;
          kept++;
          yield item;
        }
        if (queue.pending || source.size > 0) next.push(queue);
      }
      active = next;
      yield;
    }
  }
  return { leftOut: live - kept };
}

/** One subject's entry, its log cut to the newest `maxEntries - 1 - windows` entries. */
function write(state: SubjectState, now: number, maxEntries: number): Written {
  const subject: SnapshotSubject = { s: state.subject, d: state.deadline };
  const banned = state.banDeadline > now;
  if (banned) subject.b = [state.banEnd, state.banDeadline];
  let entries = 1;
  const windows = (state.counters ?? []).filter((counter): counter is FixedWindowCounter => counter instanceof FixedWindowCounter);
  if (windows.length > 0) {
    subject.f = windows.map((counter): [number, number, number, number] => [
      counter.windowMs,
      counter.limit,
      counter.window,
      counter.count,
    ]);
    entries += windows.length;
  }
  const room = maxEntries - entries;
  if (state.log && state.log.size > 0 && room > 0) {
    subject.l = state.log.newestEntries(room);
    entries += subject.l.length;
  }
  // JSON.stringify writes a lone surrogate as \udXXX (6 bytes): the bound counts the written form.
  const json = JSON.stringify(subject);
  return { subject, json, bytes: Buffer.byteLength(json, 'utf8'), entries, banned };
}

/** The snapshot of `steps` at once (a library caller's, tests'): no pause. */
export function collectSnapshot(steps: Generator<Written | undefined, unknown>, takenAt: number): MemorySnapshot {
  const subjects: SnapshotSubject[] = [];
  for (const step of steps) if (step) subjects.push(step.subject);
  return { version: 1, takenAt, subjects };
}

/**
 * The snapshot of `steps` as JSON, pausing (`pause`, by default until the I/O callbacks waiting
 * have run) whenever a slice of work has taken `sliceMs`: a large snapshot does not hold up the
 * requests while it is written. Decisions made during a pause may or may not be in it; each
 * subject is written as it was at one moment, and one reset meanwhile is not written.
 */
export async function writeSnapshotJson(
  steps: Generator<Written | undefined, { leftOut: number }>,
  takenAt: number,
  options: { sliceMs?: number; pause?: () => Promise<void> } = {},
): Promise<SnapshotText> {
  const sliceMs = options.sliceMs ?? 2;
  const pause = options.pause ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
  const chunks: string[] = [];
  let parts: string[] = [];
  let subjects = 0;
  let bytes = 0;
  let bans = 0;
  let sliceStart = performance.now();
  let step = steps.next();
  while (!step.done) {
    const item = step.value;
    if (item) {
      parts.push(item.json);
      subjects++;
      bytes += item.bytes;
      if (item.banned) bans++;
      if (parts.length === JOIN) {
        chunks.push(parts.join(','));
        parts = [];
      }
    } else if (performance.now() - sliceStart >= sliceMs) {
      await pause();
      sliceStart = performance.now();
    }
    step = steps.next();
  }
  if (parts.length > 0) chunks.push(parts.join(','));
  const head = `{"version":1,"takenAt":${takenAt},"subjects":[`;
  return {
    body: `${head}${chunks.join(',')}]}`,
    bytes: bytes + Math.max(0, subjects - 1) + head.length + 2,
    takenAt,
    subjects,
    bans,
    leftOut: step.value.leftOut,
  };
}

interface OwnerQueue {
  banned: RecentFirst;
  others: RecentFirst;
  /** Bytes the owner may still take this turn. */
  credit: number;
  /** The next subject, written, waiting for enough credit. */
  pending?: Written | undefined;
}

/**
 * States, the most recently checked first: sorted in runs of {@link RUN} (one step each), whose
 * heads a heap merges as they are taken, so no step sorts more than a run.
 */
class RecentFirst {
  private readonly runs: SubjectState[][] = [];
  private readonly heads: number[] = [];
  /** Run indexes, a max-heap on their heads' `usedAt`. */
  private readonly heap: number[] = [];
  private left: number;

  constructor(private readonly states: SubjectState[]) {
    this.left = states.length;
  }

  /** States not yet taken. */
  get size(): number {
    return this.left;
  }

  *prepare(): Generator<undefined> {
    for (let start = 0; start < this.states.length; start += RUN) {
      const run = this.states.slice(start, start + RUN).sort((a, b) => b.usedAt - a.usedAt);
      this.runs.push(run);
      this.heads.push(0);
      this.heap.push(this.runs.length - 1);
      this.up(this.heap.length - 1);
      yield;
    }
  }

  next(): SubjectState | undefined {
    if (this.heap.length === 0) return undefined;
    const run = this.heap[0]!;
    const state = this.runs[run]![this.heads[run]!++]!;
    this.left--;
    if (this.heads[run]! >= this.runs[run]!.length) {
      const last = this.heap.pop()!;
      if (this.heap.length > 0) this.heap[0] = last;
    }
    this.down(0);
    return state;
  }

  private key(slot: number): number {
    const run = this.heap[slot]!;
    return this.runs[run]![this.heads[run]!]!.usedAt;
  }

  private up(slot: number): void {
    while (slot > 0) {
      const parent = (slot - 1) >> 1;
      if (this.key(parent) >= this.key(slot)) return;
      this.swap(slot, parent);
      slot = parent;
    }
  }

  private down(slot: number): void {
    for (;;) {
      let top = slot;
      for (const child of [2 * slot + 1, 2 * slot + 2]) if (child < this.heap.length && this.key(child) > this.key(top)) top = child;
      if (top === slot) return;
      this.swap(slot, top);
      slot = top;
    }
  }

  private swap(a: number, b: number): void {
    const held = this.heap[a]!;
    this.heap[a] = this.heap[b]!;
    this.heap[b] = held;
  }
}

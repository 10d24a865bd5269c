/**
 * The event rules' state in process (the embedded default, and the fallback while Redis is down).
 * Same semantics and hashing as the Redis store (`./types.ts`); beyond `maxSubjects` subjects or
 * `maxBytes` bytes of state, the oldest subjects (first created) are dropped.
 *
 * Bytes are counted per subject by the bounds of ./cost.ts (each unit of state at its measured
 * upper bound), updated whenever an op changes the subject; so the store's heap stays within
 * about `maxBytes`, however many values a tenant's rules keep per subject. Each op kind's
 * evaluation and state are its own (./kinds/): the store holds the states and their bytes.
 */
import { type Clock, systemClock } from '../clock.js';
import { ValueHasher } from './hashing.js';
import { opHandler } from './kinds/index.js';
import type { MemoryContext } from './kinds/kind.js';
import type { CheckOps, EventOp, EventResult, EventStore } from './types.js';

export interface MemoryEventStoreOptions {
  clock?: Clock;
  /** Secret of the value digests (as the Redis store's `keySecret`). */
  keySecret?: string | Buffer;
  /** Most subjects kept; default 100,000. */
  maxSubjects?: number;
  /** Most bytes of state kept (counted as ./cost.ts bounds them); default 256 MiB. */
  maxBytes?: number;
}

/** A subject's state as the store keeps it: a kind's fields, and the bytes it was last counted at. */
type State = { bytes: number };

export class MemoryEventStore implements EventStore {
  private readonly clock: Clock;
  private readonly hasher: ValueHasher;
  private readonly maxSubjects: number;
  private readonly maxBytes: number;
  private readonly states = new Map<string, State>();
  private totalBytes = 0;
  /** States the call in progress used, counted again when it ends, each by its kind's count. */
  private readonly touched: State[] = [];
  private readonly touchedBytesOf: ((state: State) => number)[] = [];
  /** What ops get of the store: `writes` set by `decide` for the call in progress. */
  private readonly context: MemoryContext & { writes: (() => void)[] | undefined };

  constructor(options: MemoryEventStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.hasher = new ValueHasher(options.keySecret);
    this.maxSubjects = options.maxSubjects ?? 100_000;
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    if (!(this.maxBytes > 0)) throw new RangeError('maxBytes must be positive');
    this.context = {
      hasher: this.hasher,
      writes: undefined,
      state: (subject, name, create, bytesOf) => this.state(subject, name, create, bytesOf),
    };
  }

  /** Subjects with state. */
  get size(): number {
    return this.states.size;
  }

  /** Bytes of state held, as counted (see the module's header). */
  get bytes(): number {
    return this.totalBytes;
  }

  async apply(ops: readonly EventOp[], now?: number): Promise<EventResult[]> {
    const t = now ?? this.clock.now();
    this.context.writes = undefined;
    const results = ops.map((op) => opHandler(op).memory(op, t, this.context));
    this.account();
    return results;
  }

  readonly decide = async (check: CheckOps, now?: number): Promise<EventResult[]> => {
    const t = now ?? this.clock.now();
    const writes: (() => void)[] = [];
    this.context.writes = writes;
    let vetoed = check.vetoed === true;
    const results = check.ops.map((op, i) => {
      const result = opHandler(op).memory(op, t, this.context);
      if (result.fired && check.vetoes[i]) vetoed = true;
      return result;
    });
    if (!vetoed) for (const write of writes) write();
    this.account();
    return results;
  };

  /** Counts the states the call used again, then drops the oldest subjects while over `maxBytes`. */
  private account(): void {
    for (let i = 0; i < this.touched.length; i++) {
      const state = this.touched[i]!;
      if (state.bytes < 0) continue;
      const bytes = this.touchedBytesOf[i]!(state);
      this.totalBytes += bytes - state.bytes;
      state.bytes = bytes;
    }
    this.touched.length = 0;
    this.touchedBytesOf.length = 0;
    while (this.totalBytes > this.maxBytes && this.states.size > 1) this.dropOldest();
  }

  private dropOldest(): void {
    const oldest = this.states.entries().next();
    if (oldest.done) return;
    this.states.delete(oldest.value[0]);
    this.totalBytes -= oldest.value[1].bytes;
    // Dropped: not counted again, should this call have used it.
    oldest.value[1].bytes = -1;
  }

  private state<S extends State>(subject: string, name: string, create: () => S, bytesOf: (state: S) => number): S {
    const key = `${name}\0${subject}`;
    let state = this.states.get(key) as S | undefined;
    if (!state) {
      if (this.states.size >= this.maxSubjects) this.dropOldest();
      state = create();
      this.states.set(key, state);
    }
    this.touched.push(state);
    this.touchedBytesOf.push(bytesOf as (state: State) => number);
    return state;
  }
}

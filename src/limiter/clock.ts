/** A source of epoch milliseconds. Injected wherever time matters, so tests control it. */
export interface Clock {
  now(): number;
}

/** The process clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told: tests of windows run in milliseconds, not real minutes. */
export class ManualClock implements Clock {
  constructor(private current = 0) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

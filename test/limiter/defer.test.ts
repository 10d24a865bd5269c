/** Deferral on MemoryStore against the brute-force model (test/limiter/defer-properties.ts). */
import { ManualClock } from '../../src/limiter/clock.js';
import { MemoryStore } from '../../src/limiter/stores/memory/memory-store.js';
import { defineDeferProperties } from './defer-properties.js';

defineDeferProperties('MemoryStore deferral against the brute-force model', () => new MemoryStore({ clock: new ManualClock(0) }), {
  numRuns: 300,
});

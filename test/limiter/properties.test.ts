/**
 * MemoryStore against the reference model. The first run freezes the store's clock: ban TTLs and
 * eviction run on that clock (like Redis key TTLs), never on the explicit decision times, so with
 * the process clock a stall of the test process (GC, a loaded machine) longer than a ban or a
 * window would expire state the model still holds, and the run would fail by chance.
 * The second run wraps the store so its clock follows the decision times: eviction of idle
 * subjects is then active during the sequences and must not change a single decision (with times
 * that only go forward: cleanup is not part of the model).
 */
import { ManualClock } from '../../src/limiter/clock.js';
import { MemoryStore } from '../../src/limiter/stores/memory/memory-store.js';
import type { LimiterStore } from '../../src/limiter/types.js';
import { defineModelProperties } from './model-properties.js';

defineModelProperties('MemoryStore against the reference model', () => new MemoryStore({ clock: new ManualClock(0) }), {
  numRuns: 300,
});

defineModelProperties(
  'MemoryStore with eviction active against the reference model',
  () => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ clock });
    const follow = (now: number | undefined) => {
      if (now !== undefined && now > clock.now()) clock.set(now);
    };
    const following: LimiterStore = {
      check: (request) => {
        follow(request.now);
        return store.check(request);
      },
      peek: (request) => {
        follow(request.now);
        return store.peek(request);
      },
      banIfHit: (request) => {
        follow(request.now);
        return store.banIfHit(request);
      },
      undo: (request) => store.undo(request),
      reset: (subject) => store.reset(subject),
      ban: (subject, ms, now) => {
        follow(now);
        return store.ban(subject, ms, now);
      },
      unban: (subject) => store.unban(subject),
    };
    return following;
  },
  // Eviction follows the latest decision time: a time gone back may find a subject evicted that the
  // model still holds, as a Redis TTL would drop its keys.
  { numRuns: 300, timesGoBack: false },
);

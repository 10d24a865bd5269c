import { describe, expect, it } from 'vitest';
import { Deadlines } from '../../src/limiter/stores/memory/deadlines.js';

const item = (name: string) => ({ name, sweepSlot: -1 });

/** Runs `next` until a full round found nothing: the names expired at `now`, removed as the store removes them. */
function sweepAll(deadlines: Deadlines<ReturnType<typeof item>>, now: number): string[] {
  const expired: string[] = [];
  for (let quiet = 0; quiet <= deadlines.size; ) {
    const found = deadlines.next(now);
    if (found) {
      expired.push(found.name);
      deadlines.remove(found);
      quiet = 0;
    } else quiet++;
  }
  return expired.sort();
}

describe('Deadlines', () => {
  it('finds every expired item within a round, including one moved into a removed place', () => {
    const deadlines = new Deadlines<ReturnType<typeof item>>();
    const items = Array.from({ length: 100 }, (_, n) => item(`s${n}`));
    for (const [n, it] of items.entries()) deadlines.add(it, n % 3 === 0 ? 10 : 1_000);
    expect(sweepAll(deadlines, 10)).toEqual(
      items
        .filter((_, n) => n % 3 === 0)
        .map((it) => it.name)
        .sort(),
    );
    expect(deadlines.size).toBe(66);
    expect(items.filter((_, n) => n % 3 === 0).every((it) => it.sweepSlot === -1)).toBe(true);
  });

  it('follows a later deadline set on an item, and removal by the owner from the middle', () => {
    const deadlines = new Deadlines<ReturnType<typeof item>>();
    const [a, b, c] = [item('a'), item('b'), item('c')];
    deadlines.add(a, 5);
    deadlines.add(b, 5);
    deadlines.add(c, 5);
    deadlines.set(b, 50);
    deadlines.remove(a); // c moves into a's place
    expect(sweepAll(deadlines, 10)).toEqual(['c']);
    expect(sweepAll(deadlines, 49)).toEqual([]);
    expect(sweepAll(deadlines, 50)).toEqual(['b']);
    expect(deadlines.size).toBe(0);
    expect(deadlines.next(100)).toBeUndefined();
  });

  it('grows past its first capacity', () => {
    const deadlines = new Deadlines<ReturnType<typeof item>>();
    for (let n = 0; n < 1_000; n++) deadlines.add(item(`s${n}`), n);
    expect(sweepAll(deadlines, 499)).toHaveLength(500);
    expect(deadlines.size).toBe(500);
  });
});

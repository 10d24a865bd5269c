import { describe, expect, it } from 'vitest';
import { agoLabel, linear, linePath, niceTicks, timeTicks } from '../../../console/src/metrics/scale.js';

describe('niceTicks', () => {
  it.each([
    [0, [0, 1]],
    [Number.NaN, [0, 1]],
    [1, [0, 0.5, 1]],
    [7, [0, 2, 4, 6, 8]],
    [10, [0, 5, 10]],
    [0.3, [0, 0.1, 0.2, 0.3]],
    [1234, [0, 500, 1000, 1500]],
  ])('from 0 to a round value at or above %d', (max, ticks) => {
    expect(niceTicks(max)).toEqual(ticks);
  });
});

describe('linear and linePath', () => {
  const x = linear([0, 10], [0, 100]);
  const y = linear([0, 1], [50, 0]);

  it('maps domains onto ranges, inverted ones included', () => {
    expect([x(0), x(5), x(10)]).toEqual([0, 50, 100]);
    expect([y(0), y(1)]).toEqual([50, 0]);
    expect(linear([3, 3], [0, 100])(3)).toBe(100);
  });

  it('breaks the path at missing values and draws a lone point as a dot', () => {
    expect(linePath([0, 2, 4, 6, 8, 10], [0, 1, null, 0.5, Number.NaN, 1], x, y)).toBe('M0 50 L20 0 M60 25 l0 0 M100 0 l0 0');
    expect(linePath([], [], x, y)).toBe('');
  });
});

describe('timeTicks and agoLabel', () => {
  it('steps back from now at a round interval', () => {
    expect(timeTicks(0, 118_000)).toEqual([0, 30_000, 60_000, 90_000]);
    expect(timeTicks(0, 10_000)).toEqual([0, 5_000, 10_000]);
    expect(timeTicks(5, 5)).toEqual([0]);
    expect([0, 30_000, 60_000, 120_000].map(agoLabel)).toEqual(['now', '-30 s', '-1 min', '-2 min']);
  });
});

/**
 * The geometry of the line charts, apart from their markup so that it can be tested without a DOM:
 * axis ticks, linear scales and SVG paths that break where data is missing.
 */

/** Ticks from 0 to a round value at or above `max`, about `count` steps of 1, 2 or 5 × 10ⁿ. */
export function niceTicks(max: number, count = 4): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((factor) => factor * magnitude >= raw) ?? 10) * magnitude;
  const steps = Math.ceil(max / step - 1e-9);
  // toPrecision: 3 × 0.1 is 0.30000000000000004, which would show on the axis.
  const ticks: number[] = [];
  for (let index = 0; index <= steps; index++) ticks.push(Number((index * step).toPrecision(12)));
  return ticks;
}

/** A linear map from `domain` onto `range`; a domain of zero width maps everything to the range's end. */
export function linear(domain: readonly [number, number], range: readonly [number, number]): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  if (d1 === d0) return () => r1;
  return (value) => r0 + ((value - d0) / (d1 - d0)) * (r1 - r0);
}

/**
 * An SVG path through the points; a missing or non-finite value ends the segment, so a gap in the
 * data shows as a gap. A point alone in its segment is drawn as a dot (a zero-length line with
 * round caps).
 */
export function linePath(
  times: readonly number[],
  values: readonly (number | null)[],
  x: (time: number) => number,
  y: (value: number) => number,
): string {
  const parts: string[] = [];
  let open = false;
  for (let index = 0; index < times.length; index++) {
    const value = values[index];
    if (value === null || value === undefined || !Number.isFinite(value)) {
      open = false;
      continue;
    }
    const point = `${round(x(times[index]!))} ${round(y(value))}`;
    const alone = !open && !Number.isFinite(values[index + 1] ?? Number.NaN);
    parts.push(`${open ? 'L' : 'M'}${point}${alone ? ' l0 0' : ''}`);
    open = true;
  }
  return parts.join(' ');
}

/** Time ticks, in ms before `toMs` (0 is now), at a round step giving at most `count` intervals. */
export function timeTicks(fromMs: number, toMs: number, count = 4): number[] {
  const span = toMs - fromMs;
  if (span <= 0) return [0];
  const step = [5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600].map((s) => s * 1000).find((ms) => span / ms <= count) ?? span;
  const ticks: number[] = [];
  for (let ago = 0; ago <= span; ago += step) ticks.push(ago);
  return ticks;
}

/** A tick of {@link timeTicks} as read on the axis: `now`, `-30 s`, `-2 min`. */
export function agoLabel(ago: number): string {
  if (ago === 0) return 'now';
  const seconds = Math.round(ago / 1000);
  return seconds % 60 === 0 ? `-${seconds / 60} min` : `-${seconds} s`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/**
 * The RedisStore log encodings every Redis suite runs against: the packed log (the default), the
 * sorted set alone (`packedLogMax: 0`, as releases before 2026-12-01 wrote), and a packed log that
 * overflows into the sorted set at its 3rd entry and comes back when a trim leaves 1, so the moves between the two
 * happen inside the suites' sequences.
 */
export interface LogEncoding {
  name: string;
  packedLogMax: number;
}

export const LOG_ENCODINGS: readonly LogEncoding[] = [
  { name: 'packed log', packedLogMax: 256 },
  { name: 'sorted-set log', packedLogMax: 0 },
  { name: 'packed log of 2, then sorted set', packedLogMax: 2 },
];

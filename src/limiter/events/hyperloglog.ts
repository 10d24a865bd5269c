/**
 * A HyperLogLog of Redis's precision, for the in-process store's `distinct` rules above the exact
 * range: 2^14 = 16384 six-bit registers (kept one per byte), standard error 1.04/√16384 = 0.81%,
 * and Redis's estimator (Ertl's improved raw estimator, `hllCount` in Redis ≥ 5), so both stores
 * answer alike up to their different hash functions. Each value is added by a 64-bit hash: the
 * low 14 bits pick a register, the rank is 1 + the trailing zeros of the other 50 (at most 51).
 */

/** Register index bits, as Redis's HLL_P. */
export const HLL_P = 14;
const M = 1 << HLL_P;
/** Bits of the hash left for the rank, as Redis's HLL_Q. */
const Q = 64 - HLL_P;
// 1 / (2 ln 2), as Redis's HLL_ALPHA_INF.
const ALPHA_INF = 1 / (2 * Math.LN2);

/** Relative standard error of an estimate: 1.04 / √16384. */
export const HLL_STANDARD_ERROR = 1.04 / Math.sqrt(M);

export class HyperLogLog {
  readonly registers = new Uint8Array(M);
  /** Registers per value, kept as values are added, so a count costs O(51), not O(16384). */
  private readonly histogram = new Array<number>(Q + 2).fill(0);

  constructor() {
    this.histogram[0] = M;
  }

  /**
   * Adds a value by its hash, given as the low 32 bits and the high 32 bits (both unsigned);
   * true when a register changed.
   */
  add(low: number, high: number): boolean {
    const index = low & (M - 1);
    // The 50 bits above the index: 18 from `low`, then 32 from `high`; rank = 1 + their trailing zeros.
    const rest = low >>> HLL_P;
    const rank = rest !== 0 ? 1 + trailingZeros(rest) : high !== 0 ? 1 + (32 - HLL_P) + trailingZeros(high) : Q + 1;
    const old = this.registers[index]!;
    if (old >= rank) return false;
    this.registers[index] = rank;
    this.histogram[old]!--;
    this.histogram[rank]!++;
    return true;
  }

  /** Adds every register of `other` (the union, as PFMERGE). */
  merge(other: HyperLogLog): void {
    for (let i = 0; i < M; i++) {
      const old = this.registers[i]!;
      const rank = other.registers[i]!;
      if (rank > old) {
        this.registers[i] = rank;
        this.histogram[old]!--;
        this.histogram[rank]!++;
      }
    }
  }

  /** The estimated number of distinct values, rounded as Redis's PFCOUNT. */
  count(): number {
    const histogram = this.histogram;
    let z = M * tau((M - histogram[Q + 1]!) / M);
    for (let j = Q; j >= 1; j--) {
      z += histogram[j]!;
      z *= 0.5;
    }
    z += M * sigma(histogram[0]! / M);
    return Math.round((ALPHA_INF * M * M) / z);
  }
}

const trailingZeros = (x: number): number => 31 - Math.clz32(x & -x);

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  let previous: number;
  do {
    x = Math.sqrt(x);
    previous = z;
    y *= 0.5;
    z -= (1 - x) ** 2 * y;
  } while (previous !== z);
  return z / 3;
}

function sigma(x: number): number {
  if (x === 1) return Number.POSITIVE_INFINITY;
  let y = 1;
  let z = x;
  let previous: number;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous !== z);
  return z;
}

/**
 * A HyperLogLog of Redis's precision, for the in-process store's `distinct` rules above the exact
 * range: 2^14 = 16384 six-bit registers, standard error 1.04/√16384 = 0.81%, and Redis's estimator
 * (Ertl's improved raw estimator, `hllCount` in Redis ≥ 5), so both stores answer alike up to
 * their different hash functions. Each value is added by a 64-bit hash: the low 14 bits pick a
 * register, the rank is 1 + the trailing zeros of the other 50 (at most 51).
 *
 * Sparse first, as Redis's: the registers set so far, 4 bytes each, until {@link HLL_SPARSE_MAX}
 * of them; then dense, one byte a register (16 KB). So a subject seen with a few values costs a
 * few hundred bytes, not 16 KB (checks with a new user each would otherwise cost 32 KB apiece).
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

/** Registers held sparse (4 bytes each) before going dense (16,384 bytes): 8 KB, inserts stay short. */
export const HLL_SPARSE_MAX = 2048;

export class HyperLogLog {
  /** One byte per register, once dense. */
  private dense: Uint8Array | undefined;
  /** While sparse: `index << 6 | rank` of the registers set, ascending by index; `size` of them used. */
  private sparse = new Uint32Array(4);
  private size = 0;
  /** Registers per rank, kept as values are added, so a count costs O(51), not O(16384). */
  private readonly histogram = new Int32Array(Q + 2);

  constructor() {
    this.histogram[0] = M;
  }

  /** Bytes its registers take (the sparse array's capacity, or the dense registers). */
  get registerBytes(): number {
    return this.dense ? this.dense.byteLength : this.sparse.byteLength;
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
    return this.raise(index, rank);
  }

  /** Adds every register of `other` (the union, as PFMERGE). */
  merge(other: HyperLogLog): void {
    if (other.dense) {
      for (let i = 0; i < M; i++) if (other.dense[i]! > 0) this.raise(i, other.dense[i]!);
    } else {
      for (let j = 0; j < other.size; j++) this.raise(other.sparse[j]! >>> 6, other.sparse[j]! & 63);
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

  /** Sets register `index` to `rank` if that raises it; true when it did. */
  private raise(index: number, rank: number): boolean {
    if (this.dense) {
      const old = this.dense[index]!;
      if (old >= rank) return false;
      this.dense[index] = rank;
      this.histogram[old]!--;
      this.histogram[rank]!++;
      return true;
    }
    // Binary search for the index among the sparse entries.
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sparse[mid]! >>> 6 < index) lo = mid + 1;
      else hi = mid;
    }
    const found = lo < this.size && this.sparse[lo]! >>> 6 === index;
    const old = found ? this.sparse[lo]! & 63 : 0;
    if (old >= rank) return false;
    this.histogram[old]!--;
    this.histogram[rank]!++;
    if (found) {
      this.sparse[lo] = (index << 6) | rank;
      return true;
    }
    if (this.size === HLL_SPARSE_MAX) {
      this.densify();
      this.dense![index] = rank;
      return true;
    }
    if (this.size === this.sparse.length) {
      const grown = new Uint32Array(Math.min(HLL_SPARSE_MAX, 2 * this.sparse.length));
      grown.set(this.sparse);
      this.sparse = grown;
    }
    this.sparse.copyWithin(lo + 1, lo, this.size);
    this.sparse[lo] = (index << 6) | rank;
    this.size++;
    return true;
  }

  private densify(): void {
    const dense = new Uint8Array(M);
    for (let j = 0; j < this.size; j++) dense[this.sparse[j]! >>> 6] = this.sparse[j]! & 63;
    this.dense = dense;
    this.sparse = new Uint32Array(0);
    this.size = 0;
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

/**
 * The in-process HyperLogLog, sparse then dense, against a reference: plain registers (a Map of
 * index → highest rank) and Redis's estimator written out from its definition. Every count along
 * random sequences that cross the sparse limit, and merges of sparse and dense ones, must agree
 * exactly; the registers' bytes stay small while sparse.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HLL_SPARSE_MAX, HyperLogLog } from '../../../src/limiter/events/hyperloglog.js';

const P = 14;
const M = 1 << P;
const Q = 64 - P;

/** Registers by definition: the index is the low 14 bits, the rank 1 + trailing zeros of the other 50 bits. */
class ReferenceRegisters {
  readonly ranks = new Map<number, number>();
  add(low: number, high: number): void {
    const hash = (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0);
    const index = Number(hash & BigInt(M - 1));
    let rest = hash >> BigInt(P);
    let rank = 1;
    while (rank <= Q && (rest & 1n) === 0n) {
      rank++;
      rest >>= 1n;
    }
    this.ranks.set(index, Math.max(this.ranks.get(index) ?? 0, rank));
  }
  merge(other: ReferenceRegisters): void {
    for (const [index, rank] of other.ranks) this.ranks.set(index, Math.max(this.ranks.get(index) ?? 0, rank));
  }
  /** Redis's hllCount (Ertl's improved raw estimator), from the register histogram. */
  count(): number {
    const histogram = new Array<number>(Q + 2).fill(0);
    histogram[0] = M - this.ranks.size;
    for (const rank of this.ranks.values()) histogram[rank]!++;
    const tau = (x: number) => {
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
    };
    const sigma = (x: number) => {
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
    };
    let z = M * tau((M - histogram[Q + 1]!) / M);
    for (let j = Q; j >= 1; j--) {
      z += histogram[j]!;
      z *= 0.5;
    }
    z += M * sigma(histogram[0]! / M);
    return Math.round(((1 / (2 * Math.LN2)) * M * M) / z);
  }
}

const hashes = (length: number) =>
  fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })), {
    minLength: length,
    maxLength: length,
  });

describe('HyperLogLog in process', () => {
  it('counts as the reference along sequences that cross from sparse to dense', () => {
    fc.assert(
      fc.property(hashes(3 * HLL_SPARSE_MAX), (values) => {
        const hll = new HyperLogLog();
        const reference = new ReferenceRegisters();
        values.forEach(([low, high], i) => {
          hll.add(low, high);
          reference.add(low, high);
          if (i % 97 === 0 || i === values.length - 1) expect(hll.count()).toBe(reference.count());
        });
      }),
      { numRuns: 10 },
    );
  });

  it('merges sparse into sparse, dense into sparse and sparse into dense as the reference unions', () => {
    fc.assert(
      fc.property(hashes(100), hashes(3 * HLL_SPARSE_MAX), (few, many) => {
        const build = (values: [number, number][]) => {
          const hll = new HyperLogLog();
          const reference = new ReferenceRegisters();
          for (const [low, high] of values) {
            hll.add(low, high);
            reference.add(low, high);
          }
          return { hll, reference };
        };
        for (const [into, from] of [
          [few, few.slice(0, 50)],
          [few, many],
          [many, few],
        ] as const) {
          const a = build(into);
          const b = build(from);
          a.hll.merge(b.hll);
          a.reference.merge(b.reference);
          expect(a.hll.count()).toBe(a.reference.count());
        }
      }),
      { numRuns: 10 },
    );
  });

  it('holds 4 bytes a register set while sparse, 16 KB once dense', () => {
    const hll = new HyperLogLog();
    expect(hll.count()).toBe(0);
    expect(hll.registerBytes).toBeLessThanOrEqual(16);
    for (let i = 0; i < 100; i++) hll.add(Math.imul(i + 1, 2654435761) >>> 0, i);
    expect(hll.registerBytes).toBeLessThanOrEqual(4 * 128);
    for (let i = 0; i < 20_000; i++) hll.add(Math.imul(i + 7, 2246822519) >>> 0, i);
    expect(hll.registerBytes).toBe(M);
  });
});

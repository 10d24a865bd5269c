import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addToFilter, hashId, mayHold, RequestIds, SCAN_MAX } from '../../src/limiter/stores/memory/request-ids.js';
import { SubjectLog } from '../../src/limiter/stores/memory/subject-log.js';

/** The same positions kept as a plain array: what RequestIds must answer. */
class ArrayIds {
  ids: (string | undefined)[] = [];
  start = 0;
  indexOf(id: string): number {
    for (let p = this.ids.length - 1; p >= this.start; p--) if (this.ids[p] === id) return p;
    return -1;
  }
}

describe('RequestIds', () => {
  it('finds an id only by all its characters: ids with one hash are told apart', () => {
    // Two ids with one 32-bit hash (a birthday search: one in about 2^16 ids).
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let n = 0; !pair; n++) {
      const id = `id-${n}`;
      const other = seen.get(hashId(id));
      if (other !== undefined) pair = [other, id];
      seen.set(hashId(id), id);
    }
    const ids = new RequestIds(0);
    ids.append(pair[0], 0);
    expect(ids.indexOf(pair[1], 0)).toBe(-1);
    ids.append(pair[1], 0);
    expect([ids.indexOf(pair[0], 0), ids.indexOf(pair[1], 0)]).toEqual([0, 1]);
    // And with a table (more than SCAN_MAX entries), colliding in one probe sequence.
    const many = new RequestIds(0);
    for (let n = 0; n < 2 * SCAN_MAX; n++) many.append(`filler-${n}`, 0);
    many.append(pair[1], 0);
    expect(many.indexOf(pair[0], 0)).toBe(-1);
    many.append(pair[0], 0);
    expect([many.indexOf(pair[1], 0), many.indexOf(pair[0], 0)]).toEqual([2 * SCAN_MAX, 2 * SCAN_MAX + 1]);
    // Same length and hash buckets aside, ids differing in one character or in length never match.
    ids.append('abc', 0);
    expect([ids.indexOf('abd', 0), ids.indexOf('ab', 0), ids.indexOf('abcd', 0), ids.indexOf('abc', 0) >= 0]).toEqual([-1, -1, -1, true]);
  });

  it('keeps ids recorded without one apart from the empty id and from every other', () => {
    const ids = new RequestIds(3);
    expect(ids.indexOf('', 0)).toBe(-1);
    ids.append('', 0);
    ids.append(undefined, 0);
    expect(ids.indexOf('', 0)).toBe(3);
    expect(ids.indexOf('x', 0)).toBe(-1);
  });

  it('answers like a plain array through appends, inserts, removals, trims and compactions, with and without a table', () => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), id: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }) }),
      fc.record({
        kind: fc.constant('insert' as const),
        at: fc.nat(),
        id: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
      }),
      fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('trim' as const), count: fc.nat({ max: 40 }) }),
      fc.record({ kind: fc.constant('compact' as const) }),
      fc.record({ kind: fc.constant('bulk' as const), count: fc.integer({ min: 1, max: 3 * SCAN_MAX }), from: fc.nat({ max: 400 }) }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), fc.nat({ max: 20 }), (operations, initial) => {
        const model = new ArrayIds();
        model.ids = new Array<string | undefined>(initial).fill(undefined);
        const ids = new RequestIds(initial);
        const name = (n: number | undefined) => (n === undefined ? undefined : `q${n}\u4e00`.slice(0, 2 + (n % 4)));
        for (const op of operations) {
          const live = model.ids.length - model.start;
          if (op.kind === 'append') {
            ids.append(name(op.id), model.start);
            model.ids.push(name(op.id));
          } else if (op.kind === 'bulk') {
            for (let k = 0; k < op.count; k++) {
              ids.append(`b${op.from + k}`, model.start);
              model.ids.push(`b${op.from + k}`);
            }
          } else if (op.kind === 'insert') {
            const at = model.start + (op.at % (live + 1));
            ids.insertAt(at, name(op.id), model.start);
            model.ids.splice(at, 0, name(op.id));
          } else if (op.kind === 'remove' && live > 0) {
            const at = model.start + (op.at % live);
            ids.removeAt(at);
            model.ids.splice(at, 1);
          } else if (op.kind === 'trim') {
            model.start = Math.min(model.ids.length, model.start + op.count);
          } else if (op.kind === 'compact') {
            ids.compact(model.start);
            model.ids.splice(0, model.start);
            model.start = 0;
          }
          for (const probe of ['', 'q0', 'q1', 'q2\u4e00', 'b0', 'b5', 'b200', 'b401', ...model.ids.slice(-3)]) {
            if (probe === undefined) continue;
            const expected = model.indexOf(probe);
            const found = ids.indexOf(probe, model.start);
            // Duplicate ids may sit at several positions: any live one holding the id is right.
            if (expected < 0) expect(found).toBe(-1);
            else expect(model.ids[found]).toBe(probe);
            expect(found >= model.start || found === -1).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('SubjectLog request ids', () => {
  it('a trimmed id is a new send again; a removed one leaves the others and their times in place', () => {
    const log = new SubjectLog();
    for (let t = 0; t < 500; t++) log.insert(t, `id-${t}`);
    log.trim(299);
    expect([log.size, log.has('id-299'), log.has('id-300'), log.timeOf('id-499')]).toEqual([200, false, true, 499]);
    log.insert(500, 'id-0');
    expect(log.timeOf('id-0')).toBe(500);
    expect(log.remove('id-400')).toBe(400);
    expect([log.has('id-400'), log.timeOf('id-401'), log.timeOf('id-299'), log.size]).toEqual([false, 401, undefined, 200]);
    // Out of order (a time gone back): the later entries move up and keep their ids.
    log.insert(350, 'late');
    expect([log.timeOf('late'), log.timeOf('id-351'), log.timeOf('id-499'), log.remove('id-300')]).toEqual([350, 351, 499, 300]);
  });

  it('anonymous entries before the first id keep their places', () => {
    const log = new SubjectLog();
    for (let t = 0; t < 100; t++) log.insert(t, undefined);
    log.insert(100, 'a');
    log.insert(50, 'b');
    expect([log.timeOf('a'), log.timeOf('b'), log.size]).toEqual([100, 50, 102]);
    log.trim(99);
    expect([log.timeOf('a'), log.has('b'), log.size]).toEqual([100, false, 1]);
    log.trim(100);
    expect([log.has('a'), log.size]).toEqual([false, 0]);
    log.insert(101, 'a');
    expect(log.timeOf('a')).toBe(101);
  });
});

describe('IdFilter', () => {
  it('never says no for an id it was given', () => {
    const filter = { idBitsLow: 0, idBitsHigh: 0 };
    for (let n = 0; n < 200; n++) {
      addToFilter(filter, `msg-${n}`);
      for (let m = 0; m <= n; m += 7) expect(mayHold(filter, `msg-${m}`)).toBe(true);
    }
    const empty = { idBitsLow: 0, idBitsHigh: 0 };
    expect(mayHold(empty, 'msg-0')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { allocate, maxInFlight, type SlotState, sharesOf, type TenantDemand } from '../../src/core/fair-share.js';

const none = new Map<string, number>();
const slots = (concurrency: number, inFlight: Record<string, number> = {}, weights: Record<string, number> = {}): SlotState => ({
  concurrency,
  inFlight: new Map(Object.entries(inFlight)),
  weights: new Map(Object.entries(weights)),
});
const counts = (takes: ReturnType<typeof allocate>) => Object.fromEntries(takes.map((t) => [`${t.lane}:${t.tenantId}`, t.count]));

describe('fair shares of the send slots', () => {
  it('a tenant alone uses every slot (work-conserving)', () => {
    expect(counts(allocate([{ tenantId: 'a', lane: 1, available: 600 }], slots(32)))).toEqual({ '1:a': 32 });
  });

  it('tenants with due messages split the free slots by round-robin, whatever came first', () => {
    const demand: TenantDemand[] = [
      { tenantId: 'a', lane: 1, available: 600 },
      { tenantId: 'b', lane: 1, available: 20 },
    ];
    expect(counts(allocate(demand, slots(32)))).toEqual({ '1:a': 16, '1:b': 16 });
    expect(counts(allocate(demand, slots(8)))).toEqual({ '1:a': 4, '1:b': 4 });
  });

  it('transactional before bulk, for every tenant', () => {
    const demand: TenantDemand[] = [
      { tenantId: 'a', lane: 1, available: 600 },
      { tenantId: 'b', lane: 0, available: 1 },
    ];
    const takes = allocate(demand, slots(4, { a: 4 }));
    expect(takes[0]).toEqual({ tenantId: 'b', lane: 0, count: 1 });
    expect(counts(takes)).toEqual({ '0:b': 1 }); // a is above its share and no slot is free
  });

  it('a newcomer gets its share even when another tenant holds every slot; the total stays within 2 x slots', () => {
    const takes = allocate(
      [
        { tenantId: 'slow', lane: 0, available: 300 },
        { tenantId: 'good', lane: 0, available: 20 },
      ],
      slots(32, { slow: 32 }),
    );
    expect(counts(takes)).toEqual({ '0:good': 16 });
    expect(maxInFlight(32)).toBe(64);
  });

  it('weights set the shares: 3, 2 and 1', () => {
    const active = ['a', 'b', 'c'];
    expect(
      Object.fromEntries(
        sharesOf(active, {
          concurrency: 60,
          weights: new Map([
            ['a', 3],
            ['b', 2],
          ]),
        }),
      ),
    ).toEqual({ a: 30, b: 20, c: 10 });
    const demand = active.map((tenantId) => ({ tenantId, lane: 0 as const, available: 1000 }));
    expect(counts(allocate(demand, slots(60, {}, { a: 3, b: 2 })))).toEqual({ '0:a': 30, '0:b': 20, '0:c': 10 });
  });

  it('every active tenant gets at least one slot, and a tenant above its share waits for free slots', () => {
    const demand = ['a', 'b', 'c', 'd'].map((tenantId) => ({ tenantId, lane: 0 as const, available: 5 }));
    expect(Object.values(counts(allocate(demand, slots(2))))).toEqual([1, 1, 1, 1]);
    expect(counts(allocate([{ tenantId: 'a', lane: 0, available: 5 }], slots(4, { a: 4, b: 0 })))).toEqual({});
  });

  it('free slots are handed out once minFree are free; shares at once', () => {
    const demand: TenantDemand[] = [{ tenantId: 'a', lane: 0, available: 50 }];
    expect(counts(allocate(demand, { ...slots(32, { a: 30 }), minFree: 8 }))).toEqual({});
    expect(counts(allocate(demand, { ...slots(32, { a: 24 }), minFree: 8 }))).toEqual({ '0:a': 8 });
    const newcomer: TenantDemand[] = [...demand, { tenantId: 'b', lane: 0, available: 3 }];
    expect(counts(allocate(newcomer, { ...slots(32, { a: 30 }), minFree: 8 }))).toEqual({ '0:b': 3 });
    // A tenant owed less than minFree waits for more of its sends to finish, like the free slots.
    expect(counts(allocate(newcomer, { ...slots(32, { a: 30, b: 10 }), minFree: 8 }))).toEqual({});
    expect(counts(allocate(newcomer, { ...slots(32, { a: 30, b: 8 }), minFree: 8 }))).toEqual({ '0:b': 3 });
  });

  it('round-robin starts after the tenant served last', () => {
    const demand = ['a', 'b', 'c'].map((tenantId) => ({ tenantId, lane: 0 as const, available: 5 }));
    const one = (after?: string) =>
      allocate(demand, { concurrency: 3, inFlight: new Map([['x', 5]]), weights: none, ...(after ? { after } : {}) }).map(
        (t) => t.tenantId,
      );
    expect(one()).toEqual(['a']);
    expect(one('a')).toEqual(['b']);
    expect(one('c')).toEqual(['a']);
  });
});

import { describe, expect, it } from 'vitest';
import { PaceQueue } from '../../src/delivery/pace-queue.js';

/** A pace that lets `perRound` checks through, then denies until `release()` opens the next round. */
function gatedPace(perRound: number) {
  let left = perRound;
  return {
    check: async () => {
      if (left > 0) {
        left -= 1;
        return { allowed: true, retryAfterMs: 0 };
      }
      return { allowed: false, retryAfterMs: 5 };
    },
    release: () => {
      left = perRound;
    },
    hold: () => {
      left = 0;
    },
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('PaceQueue', () => {
  it('serves transactional waiters before bulk ones that waited longer, each lane in arrival order', async () => {
    const pace = gatedPace(1);
    pace.hold();
    const queue = new PaceQueue(pace.check);
    const order: string[] = [];
    const enter = (name: string, priority: 'bulk' | 'transactional') => queue.enter(priority, undefined).then(() => order.push(name));
    const all = [enter('b1', 'bulk'), enter('b2', 'bulk'), enter('b3', 'bulk')];
    await settle();
    all.push(enter('t1', 'transactional'), enter('t2', 'transactional'));
    for (let round = 0; round < 5 && order.length < 5; round++) {
      pace.release();
      await settle();
      // One slot a round: exactly one more waiter gets through each time.
      expect(order.length).toBe(Math.min(5, round + 1));
    }
    await Promise.all(all);
    expect(order).toEqual(['t1', 't2', 'b1', 'b2', 'b3']);
  });

  it('lets an aborted waiter go at once and keeps serving the rest', async () => {
    const pace = gatedPace(1);
    pace.hold();
    const queue = new PaceQueue(pace.check);
    const abort = new AbortController();
    const aborted = queue.enter('bulk', abort.signal);
    const kept = queue.enter('bulk', undefined);
    abort.abort(new Error('stopping'));
    await expect(aborted).rejects.toThrow('stopping');
    pace.release();
    await expect(kept).resolves.toBeUndefined();
  });

  it('rejects a waiter whose check failed, and stops polling once no one waits', async () => {
    let fail = true;
    const queue = new PaceQueue(async () => {
      if (fail) throw new Error('redis down');
      return { allowed: true, retryAfterMs: 0 };
    });
    await expect(queue.enter('transactional', undefined)).rejects.toThrow('redis down');
    fail = false;
    await expect(queue.enter('bulk', undefined)).resolves.toBeUndefined();
  });

  it('checks every waiter that arrived in one turn in one round, so a batching limiter sees them together', async () => {
    // Each check answers only once all three were asked: waiters split over rounds never finish.
    let asked = 0;
    let everyoneAsked = () => {};
    const barrier = new Promise<void>((resolve) => {
      everyoneAsked = resolve;
    });
    const queue = new PaceQueue(async () => {
      asked += 1;
      if (asked === 3) everyoneAsked();
      await barrier;
      return { allowed: true, retryAfterMs: 0 };
    });
    const waiters = Promise.all([queue.enter('bulk', undefined), queue.enter('bulk', undefined), queue.enter('transactional', undefined)]);
    const outcome = await Promise.race([waiters.then(() => 'served'), new Promise((resolve) => setTimeout(resolve, 500, 'split'))]);
    expect(outcome).toBe('served');
  });

  it('checks at most roundSize waiters a round, from the head, while the pace is exhausted', async () => {
    let checks = 0;
    let open = false;
    const queue = new PaceQueue(
      async () => {
        checks += 1;
        return open ? { allowed: true, retryAfterMs: 0 } : { allowed: false, retryAfterMs: 200 };
      },
      () => 2,
    );
    const order: number[] = [];
    const waiters = Array.from({ length: 10 }, (_, i) => queue.enter('bulk', undefined).then(() => order.push(i)));
    // Each checked once on entering (no one waited yet), then queued with the first round under way.
    await settle();
    checks = 0;
    // The next round, 200 ms on (later on a loaded machine): its checks are made in one turn.
    for (let waited = 0; checks === 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    // It asked for the first two only.
    expect(checks).toBe(2);
    open = true;
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('rejects a wait whose signal was aborted before it began, as a promise', async () => {
    const queue = new PaceQueue(async () => ({ allowed: true, retryAfterMs: 0 }));
    const abort = new AbortController();
    abort.abort(new Error('stopping'));
    let thrown: unknown;
    let waited: Promise<void> | undefined;
    try {
      waited = queue.enter('bulk', abort.signal);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeUndefined();
    await expect(waited).rejects.toThrow('stopping');
  });
});

describe('PaceQueue, tenants within a lane', () => {
  /** A pace that lets `perRound` of each round's checks through (a round's checks are made in one turn), closed until `open`. */
  function roundPace(perRound: number) {
    let open = false;
    let inRound = 0;
    let marked = false;
    return {
      open: () => {
        open = true;
      },
      check: async () => {
        if (!marked) {
          marked = true;
          queueMicrotask(() => {
            marked = false;
            inRound = 0;
          });
        }
        return open && inRound++ < perRound ? { allowed: true, retryAfterMs: 0 } : { allowed: false, retryAfterMs: 1 };
      },
    };
  }

  it('serves the tenants of a lane by their weights (deficit round-robin), whatever the round size', async () => {
    for (const perRound of [1, 2, 5]) {
      const pace = roundPace(perRound);
      const weights = new Map([
        ['a', 3],
        ['b', 2],
        ['c', 1],
      ]);
      const queue = new PaceQueue(
        pace.check,
        () => perRound,
        (tenant) => weights.get(tenant) ?? 1,
      );
      const order: string[] = [];
      const all: Promise<unknown>[] = [];
      for (let i = 0; i < 100; i++)
        for (const tenant of ['a', 'b', 'c']) all.push(queue.enter('bulk', undefined, tenant).then(() => order.push(tenant)));
      pace.open();
      await Promise.all(all);
      const first = order.slice(0, 120);
      const share = (tenant: string) => first.filter((t) => t === tenant).length;
      expect([share('a'), share('b'), share('c')]).toEqual([60, 40, 20]);
    }
  });

  it('a tenant arriving behind another tenant’s long queue is served within one turn', async () => {
    const pace = roundPace(1);
    const queue = new PaceQueue(pace.check, () => 1);
    const order: string[] = [];
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++) all.push(queue.enter('bulk', undefined, 'early').then(() => order.push('early')));
    all.push(queue.enter('bulk', undefined, 'late').then(() => order.push('late')));
    pace.open();
    await Promise.all(all);
    expect(order.indexOf('late')).toBeLessThanOrEqual(1);
  });
});

/**
 * The RiskEngine's de-duplication of recorded events by request id when the store degrades: a
 * claim answered by the fallback is not trusted (in `deny` mode it would call every event a
 * repeat), and a claim whose record degraded is released, so the client's retry records.
 */
import { describe, expect, it } from 'vitest';
import {
  type AppliedEvents,
  CircuitBreaker,
  DegradingEventStore,
  directEvents,
  type EventOp,
  Limiter,
  MemoryEventStore,
  MemoryStore,
  normalizeRiskRules,
  RiskEngine,
} from '../../../src/limiter/index.js';

const RULES = normalizeRiskRules([{ name: 'failed', kind: 'last-n', key: ['user'], n: 5, m: 2, outcome: 'failed' }]);
const DIMS = { user: 'u1' };

function engineOn(events: { apply(ops: readonly EventOp[], now?: number): Promise<AppliedEvents> }) {
  const limiter = new Limiter({ store: new MemoryStore() });
  return new RiskEngine({ windows: limiter, peek: limiter, events });
}

describe('RiskEngine: events de-duplicated by request id while the store degrades', () => {
  it('in deny mode with the store down, an event with a request id is recorded (degraded), not called a repeat', async () => {
    const down = { apply: async (): Promise<never> => Promise.reject(new Error('connection refused')) };
    const events = new DegradingEventStore({
      primary: down,
      local: new MemoryEventStore(),
      breaker: new CircuitBreaker(),
      mode: 'deny',
      timeoutMs: 50,
    });
    const engine = engineOn(events);
    for (let i = 0; i < 2; i++) {
      expect(await engine.record('t:', RULES, DIMS, 'failed', undefined, 'req-1')).toEqual({ degraded: 'deny' });
    }
  });

  it('a claim whose record degraded is released: the retry records in the store of record, once', async () => {
    const store = new MemoryEventStore();
    let recordsDegrade = true;
    // The claim reaches the store; the record of the rules' state does not (another cluster slot).
    const events = {
      async apply(ops: readonly EventOp[], now?: number): Promise<AppliedEvents> {
        if (recordsDegrade && ops.some((op) => op.kind !== 'claim'))
          return { results: ops.map(() => ({ fired: false, count: 0 })), degraded: 'allow' };
        return { results: await store.apply(ops, now) };
      },
    };
    const engine = engineOn(events);
    expect(await engine.record('t:', RULES, DIMS, 'failed', undefined, 'req-2')).toEqual({ degraded: 'allow' });
    recordsDegrade = false;
    expect(await engine.record('t:', RULES, DIMS, 'failed', undefined, 'req-2')).toEqual({});
    expect(await engine.record('t:', RULES, DIMS, 'failed', undefined, 'req-2')).toEqual({ duplicate: true });
    // One outcome recorded in all: a check sees 1 of the last 5 failed, below m = 2 (two would deny).
    const direct = engineOn(directEvents(store));
    expect(await direct.check('t:', RULES, DIMS, { record: false })).toMatchObject({ allowed: true });
  });
});

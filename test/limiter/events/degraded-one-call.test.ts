/**
 * A check in one call while Redis is away: the event store decides nothing, so the engine judges
 * the check apart, its window rules through the limiter's own fallback (`local` mode divides
 * their limits by `divideBy`), as a deployment without one-call checks would.
 */
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import {
  DegradingEventStore,
  DegradingLimiter,
  Limiter,
  MemoryEventStore,
  MemoryStore,
  normalizeRiskRules,
  RedisEventStore,
  RedisStore,
  RiskEngine,
} from '../../../src/limiter/index.js';

// Nothing listens on port 1: every call fails at once.
const client = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
afterAll(() => client.disconnect());

const RULES = normalizeRiskRules([
  { name: 'four-per-phone', kind: 'window', key: ['phone'], windowMs: 60_000, limit: 4 },
  { name: 'failed', kind: 'last-n', key: ['user'], n: 5, m: 3, outcome: 'failed' },
]);

it('with Redis away a one-call check falls back apart: window limits divided in local mode, answers degraded', async () => {
  const windows = new DegradingLimiter({
    primary: new Limiter({ store: new RedisStore({ client }) }),
    local: new Limiter({ store: new MemoryStore() }),
    policy: { mode: 'local', divideBy: 2 },
  });
  const primary = new RedisEventStore({ client });
  expect(primary.decide).toBeTypeOf('function');
  const events = new DegradingEventStore({
    primary,
    local: new MemoryEventStore(),
    breaker: windows.breaker,
    mode: 'local',
    timeoutMs: 200,
  });
  expect(events.decide).toBeTypeOf('function');
  const engine = new RiskEngine({ windows, peek: new Limiter({ store: new MemoryStore() }), events });
  const dims = { phone: 'p1', user: 'u1' };
  const decisions = [];
  for (let i = 0; i < 4; i++) decisions.push(await engine.check('scope:', RULES, dims));
  expect(decisions.map((d) => d.decision)).toEqual(['allow', 'allow', 'deny', 'deny']);
  for (const decision of decisions) expect(decision.degraded).toBe('local');
});

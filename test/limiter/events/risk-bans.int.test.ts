/**
 * Bans of window rules under real concurrency: 50 checks at once on one phone, with a rule of
 * limit 10 and one of limit 12 that bans for 60 s. Exactly 10 pass; the limit-12 rule never holds
 * more than the 10 standing admissions, so nothing bans (a check taken back by the limit-10 rule
 * must not count towards a ban). With the limit-10 rule in shadow, 12 stand and the 13th bans.
 * In process, on a standalone Redis (one call per check, and window rules in the limiter) and
 * on the cluster (every window rule in the limiter, the ban deferred until the undos landed).
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  directEvents,
  Limiter,
  MemoryEventStore,
  MemoryStore,
  normalizeRiskRules,
  RedisEventStore,
  RedisStore,
  type RiskDecision,
  RiskEngine,
  type RiskMode,
} from '../../../src/limiter/index.js';
import { describeWith, servers } from '../../support/servers.js';

const CHECKS = 50;

const rules = (mode: RiskMode, algorithm = 'sliding-log') =>
  normalizeRiskRules([
    { name: 'ten', kind: 'window', key: ['phone'], windowMs: 60_000, limit: 10, mode, algorithm },
    { name: 'twelve-ban', kind: 'window', key: ['phone'], windowMs: 60_000, limit: 12, banMs: 60_000, algorithm },
  ]);

type Engines = (oneCall: boolean) => RiskEngine;

function defineBanRaces(name: string, engines: Engines, oneCalls: readonly boolean[]) {
  for (const oneCall of oneCalls) {
    describe(`${name}, oneCall ${oneCall}`, () => {
      for (const algorithm of ['sliding-log', 'fixed-window']) {
        it(`${algorithm}: ${CHECKS} concurrent checks, limits 10 and 12 (ban 60 s): exactly 10 pass and nothing bans`, async () => {
          const engine = engines(oneCall);
          const scope = `${randomUUID()}:`;
          const set = rules('enforce', algorithm);
          const dims = { phone: '+8613800000001' };
          const answers = await Promise.all(Array.from({ length: CHECKS }, () => engine.check(scope, set, dims)));
          expect(answers.filter((answer) => answer.allowed)).toHaveLength(10);
          expect(codes(answers)).not.toContain('BANNED');
          // The limit-12 rule holds the 10 that stand, unbanned: a later check meets the limit-10 rule alone.
          const after = await engine.check(scope, set, dims);
          expect(after.reasons.map((reason) => [reason.rule, reason.code])).toEqual([['ten', 'RATE_LIMITED']]);
        });

        it(`${algorithm}: the same with the limit-10 rule in shadow: 12 stand and the breach of the 13th bans`, async () => {
          const engine = engines(oneCall);
          const scope = `${randomUUID()}:`;
          const set = rules('shadow', algorithm);
          const dims = { phone: '+8613800000002' };
          const answers = await Promise.all(Array.from({ length: CHECKS }, () => engine.check(scope, set, dims)));
          expect(answers.filter((answer) => answer.allowed)).toHaveLength(12);
          const after = await engine.check(scope, set, dims);
          expect(after.reasons).toContainEqual(expect.objectContaining({ rule: 'twelve-ban', code: 'BANNED', shadow: false }));
          const reason = after.reasons.find((r) => r.rule === 'twelve-ban')!;
          expect(reason.retryAfterMs).toBeGreaterThan(55_000);
          expect(reason.retryAfterMs).toBeLessThanOrEqual(60_000);
        });
      }
    });
  }
}

function codes(answers: readonly RiskDecision[]): string[] {
  return answers.flatMap((answer) => answer.reasons.map((reason) => reason.code));
}

defineBanRaces(
  'in process',
  (oneCall) => {
    const limiter = new Limiter({ store: new MemoryStore() });
    return new RiskEngine({ windows: limiter, peek: limiter, events: directEvents(new MemoryEventStore()), oneCall });
  },
  [true, false],
);

const redisTargets = [
  { name: 'standalone Redis', variable: 'SLUICE_TEST_REDIS_URL', available: servers.redisUrl, connect: () => new Redis(servers.redisUrl!) },
  {
    name: 'Redis Cluster',
    variable: 'SLUICE_TEST_REDIS_CLUSTER',
    available: servers.redisCluster,
    connect: () => new Cluster(servers.redisCluster!),
  },
];

for (const target of redisTargets) {
  describeWith(target.available, target.variable, `risk bans on ${target.name}`, () => {
    const client = target.connect();
    afterAll(() => {
      client.disconnect();
    });
    defineBanRaces(
      target.name,
      (oneCall) => {
        const prefix = `test:rb:${randomUUID().slice(0, 8)}`;
        const limiter = new Limiter({ store: new RedisStore({ client, prefix: `${prefix}:lim` }) });
        const events = directEvents(new RedisEventStore({ client, prefix }));
        return new RiskEngine({ windows: limiter, peek: limiter, events, oneCall });
      },
      [true, false],
    );
  });
}

it('the target list covers what it claims', () => {
  expect(redisTargets).toHaveLength(2);
});

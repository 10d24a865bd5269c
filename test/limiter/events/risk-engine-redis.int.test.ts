/**
 * The RiskEngine on standalone Redis and on the cluster: a denied check's window admissions are
 * taken back without the answer waiting for it, and still before any later check of the subject
 * (the undo goes out on the same connection first), so the next check never counts them.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { ruleSubject } from '../../../src/limiter/events/risk-engine.js';
import { directEvents, Limiter, normalizeRiskRules, RedisEventStore, RedisStore, RiskEngine } from '../../../src/limiter/index.js';
import { describeWith, servers } from '../../support/servers.js';

const targets = [
  { name: 'standalone', variable: 'SLUICE_TEST_REDIS_URL', available: servers.redisUrl, connect: () => new Redis(servers.redisUrl!) },
  {
    name: 'cluster',
    variable: 'SLUICE_TEST_REDIS_CLUSTER',
    available: servers.redisCluster,
    connect: () => new Cluster(servers.redisCluster!),
  },
];

const RULES = normalizeRiskRules([
  { name: 'one-per-phone', kind: 'window', key: ['phone'], windowMs: 60_000, limit: 1 },
  { name: 'one-per-device', kind: 'window', key: ['device'], windowMs: 60_000, limit: 1 },
  { name: 'failed', kind: 'last-n', key: ['user'], n: 5, m: 1, outcome: 'failed' },
]);

for (const target of targets) {
  describeWith(target.available, target.variable, `RiskEngine on ${target.name}`, () => {
    const client = target.connect();
    afterAll(() => {
      client.disconnect();
    });

    it('a check right after a denied one never counts the denied one’s window admissions', async () => {
      const prefix = `test:re:${randomUUID().slice(0, 8)}`;
      const limiter = new Limiter({ store: new RedisStore({ client, prefix: `${prefix}:lim` }) });
      const engine = new RiskEngine({ windows: limiter, peek: limiter, events: directEvents(new RedisEventStore({ client, prefix })) });
      const scope = `${randomUUID()}:`;
      const dims = { phone: 'p1', device: 'd1', user: 'u1' };
      await engine.record(scope, RULES, dims, 'failed');
      for (let i = 0; i < 30; i++) {
        // Denied by the last-n rule alone: both windows admitted, then are taken back.
        const decision = await engine.check(scope, RULES, dims);
        expect(decision.decision).toBe('deny');
        expect(decision.reasons.map((reason) => reason.rule)).toEqual(['failed']);
      }
      // Concurrent checks of one turn too: each sees the windows of the ones before it undone.
      const together = await Promise.all(Array.from({ length: 20 }, () => engine.check(scope, RULES, dims)));
      const windowDenials = together.filter((decision) => decision.reasons.some((reason) => reason.kind === 'window'));
      // Within one batch a check does see an earlier one's admission (its undo is not sent yet): at most all but one.
      expect(windowDenials.length).toBeLessThan(20);
      const after = await engine.check(scope, RULES, dims);
      expect(after.reasons.map((reason) => reason.rule)).toEqual(['failed']);
    });

    it(`window rules: in the event store, one script call per check, on standalone; in the limiter on a cluster or with oneCall false`, async () => {
      for (const oneCall of [true, false]) {
        const prefix = `test:re:${randomUUID().slice(0, 8)}`;
        const limiter = new Limiter({ store: new RedisStore({ client, prefix: `${prefix}:lim` }) });
        const events = new RedisEventStore({ client, prefix });
        const engine = new RiskEngine({ windows: limiter, peek: limiter, events: directEvents(events), oneCall });
        const scope = `${randomUUID()}:`;
        const dims = { phone: 'p1', device: 'd1', user: 'u1' };
        expect((await engine.check(scope, RULES, dims)).decision).toBe('allow');
        const second = await engine.check(scope, RULES, dims);
        expect(second.reasons.map((reason) => [reason.rule, reason.code, reason.count])).toEqual([
          ['one-per-phone', 'RATE_LIMITED', 1],
          ['one-per-device', 'RATE_LIMITED', 1],
        ]);
        const inStore = target.name === 'standalone' && oneCall;
        const windowKey = `${events.keyBase(ruleSubject(scope, RULES[0]!, dims)).base}w`;
        expect(await client.exists(windowKey)).toBe(inStore ? 1 : 0);
      }
    });
  });
}

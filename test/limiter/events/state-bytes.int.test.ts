/**
 * A risk rule's state for one subject stays within the bytes src/limiter/events/cost.ts states, on
 * Redis: the subject's keys filled to their largest state, summed by `MEMORY USAGE`, on a
 * standalone server and on a cluster node. And what one check on a new subject writes for the
 * largest `seen` filter accepted by default is one segment (4 KB), not the filter: before
 * segments, one check on a new user wrote the whole 10.5 MB filter of the issue's rule.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import {
  checkRiskStateBytes,
  directEvents,
  Limiter,
  normalizeRiskRule,
  RedisEventStore,
  RedisStore,
  RiskEngine,
  riskRuleStateBytes,
  STATE_BYTES,
} from '../../../src/limiter/index.js';
import { describeWith, servers } from '../../support/servers.js';
import { T0, WORST_STATES } from './worst-states.js';

const targets = [
  { name: 'standalone', variable: 'SLUICE_TEST_REDIS_URL', available: servers.redisUrl, connect: () => new Redis(servers.redisUrl!) },
  {
    name: 'cluster',
    variable: 'SLUICE_TEST_REDIS_CLUSTER',
    available: servers.redisCluster,
    connect: () => new Cluster(servers.redisCluster!),
  },
];

const nodesOf = (client: Redis | Cluster): Redis[] => (client instanceof Cluster ? client.nodes('master') : [client]);

/** `MEMORY USAGE` summed over the keys matching `pattern` (or the keys named), on every master. */
async function memoryOf(client: Redis | Cluster, pattern: string | string[]): Promise<{ bytes: number; keys: number }> {
  let bytes = 0;
  let keys = 0;
  for (const node of nodesOf(client)) {
    const names = typeof pattern === 'string' ? await node.keys(pattern) : pattern;
    for (const key of names) {
      const usage = await node.call('MEMORY', 'USAGE', key, 'SAMPLES', '0').catch(() => null);
      if (typeof usage === 'number') {
        bytes += usage;
        keys++;
      }
    }
  }
  return { bytes, keys };
}

/** A Redis glob matching `text` literally (a key base holds `{`, `}` and base64url). */
const literal = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

for (const target of targets) {
  describeWith(target.available, target.variable, `risk state bytes on Redis (${target.name})`, () => {
    const client = target.connect();
    const prefix = `test:sb:${randomUUID().slice(0, 8)}`;
    afterAll(async () => {
      for (const node of nodesOf(client)) {
        const keys = await node.keys(`${prefix}*`);
        for (const key of keys) await node.del(key);
      }
      client.disconnect();
    });

    for (const state of WORST_STATES) {
      it(`${state.name}: MEMORY USAGE within riskRuleStateBytes`, async () => {
        const store = new RedisEventStore({ client, prefix, keySecret: 'bytes' });
        const subject = `subject-${randomUUID()}`;
        await state.fill((ops, now) => store.apply(ops, now), subject);
        const used = await memoryOf(client, `${literal(store.keyBase(subject).base)}*`);
        expect(used.keys).toBeGreaterThan(0);
        expect(used.bytes).toBeLessThanOrEqual(riskRuleStateBytes(state.rule).bytes);
      }, 60_000);
    }

    it('window rules in the limiter, with the engine’s request ids and the ban: a sliding log of 1,000, a fixed window of 500 across its edge', async () => {
      const limiterStore = new RedisStore({ client, prefix: `${prefix}:lim`, keySecret: 'bytes' });
      const limiter = new Limiter({ store: limiterStore });
      const engine = new RiskEngine({
        windows: limiter,
        peek: limiter,
        events: directEvents(new RedisEventStore({ client, prefix })),
        oneCall: false,
      });
      for (const [algorithm, limit, times] of [
        ['sliding-log', 1000, (i: number) => T0 + i],
        ['fixed-window', 500, (i: number) => T0 + 600_000 - 500 + i],
      ] as const) {
        const rule = normalizeRiskRule(
          { name: algorithm, kind: 'window', key: ['user'], windowMs: 600_000, limit, banMs: 60_000, algorithm },
          0,
        );
        const user = randomUUID();
        for (let i = 0; i < 1000; i++) expect((await engine.check('t:', [rule], { user }, { now: times(i) })).allowed).toBe(true);
        await engine.check('t:', [rule], { user }, { now: times(1000) });
        expect((await engine.check('t:', [rule], { user }, { now: times(1001) })).reasons[0]!.code).toBe('BANNED');
        const keys = limiterStore.keysOf(`t:${algorithm.length}:${algorithm}:${JSON.stringify([user])}`);
        const used = await memoryOf(client, [keys.log, keys.packed, keys.ban, keys.counters, keys.scheduled]);
        expect(used.keys, algorithm).toBeGreaterThanOrEqual(2);
        expect(used.bytes, algorithm).toBeLessThanOrEqual(riskRuleStateBytes(rule).bytes);
      }
    }, 60_000);

    it('one check on a new subject writes one segment of the largest seen filter the default cap accepts, not the filter', async () => {
      // 1,000,000 values at 0.01: a 1.2 MB filter (1.4 MB of state when full), within the default 2 MiB.
      const seen = normalizeRiskRule(
        { name: 'new-device', kind: 'seen', key: ['user'], of: 'device', capacity: 1_000_000, falsePositiveRate: 0.01 },
        0,
      );
      checkRiskStateBytes([seen], 2_097_152);
      const store = new RedisEventStore({ client, prefix, keySecret: 'bytes' });
      const engine = new RiskEngine({
        windows: new Limiter({ store: new RedisStore({ client, prefix: `${prefix}:lim` }) }),
        peek: new Limiter({ store: new RedisStore({ client, prefix: `${prefix}:lim` }) }),
        events: directEvents(store),
      });
      for (let i = 0; i < 20; i++) {
        const user = `user-${randomUUID()}`;
        expect((await engine.check('t:', [seen], { user, device: 'd1' })).decision).toBe('deny');
        const used = await memoryOf(client, `${literal(store.keyBase(`t:10:new-device:${JSON.stringify([user])}`).base)}*`);
        expect(used.keys).toBe(1);
        expect(used.bytes).toBeLessThanOrEqual(STATE_BYTES.seenSegment);
      }
    });
  });
}

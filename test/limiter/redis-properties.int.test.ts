/**
 * The shared model properties (test/limiter/model-properties.ts) against RedisStore, with every log
 * encoding (test/limiter/log-encodings.ts), on the standalone server and on the cluster: random
 * sequences of checks, peeks, undos, bans and resets decide exactly as the reference model does,
 * and deferrals as the brute-force model of test/limiter/defer-properties.ts.
 * Runs are kept modest; the conformance suite covers the hand-picked cases.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { RedisStore } from '../../src/limiter/stores/redis/redis-store.js';
import { describeWith, servers } from '../support/servers.js';
import { defineDeferProperties } from './defer-properties.js';
import { LOG_ENCODINGS } from './log-encodings.js';
import { defineModelProperties } from './model-properties.js';

const prefix = `test:rprop:${randomUUID().slice(0, 8)}`;
let client: Redis | undefined;
let cluster: Cluster | undefined;

async function deleteKeys(node: Redis, del: (keys: string[]) => Promise<unknown>): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await del(keys);
  } while (cursor !== '0');
}

afterAll(async () => {
  if (client) {
    const standalone = client;
    await deleteKeys(standalone, (keys) => standalone.del(...keys));
    standalone.disconnect();
  }
  if (cluster) {
    const shared = cluster;
    for (const node of shared.nodes('master')) await deleteKeys(node, (keys) => Promise.all(keys.map((key) => shared.del(key))));
    shared.disconnect();
  }
});

// TTLs run on Redis's clock while the sequences' times are explicit: keys are kept long enough.
describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'RedisStore model properties', () => {
  for (const encoding of LOG_ENCODINGS) {
    defineModelProperties(
      `RedisStore (standalone, ${encoding.name})`,
      () => {
        client ??= new Redis(servers.redisUrl!);
        return new RedisStore({ client, prefix, minTtlMs: 600_000, packedLogMax: encoding.packedLogMax });
      },
      { numRuns: 150 },
    );
    defineDeferProperties(
      `RedisStore deferral (standalone, ${encoding.name})`,
      () => {
        client ??= new Redis(servers.redisUrl!);
        return new RedisStore({ client, prefix, minTtlMs: 600_000, packedLogMax: encoding.packedLogMax });
      },
      { numRuns: 150 },
    );
  }
});

describeWith(servers.redisCluster, 'SLUICE_TEST_REDIS_CLUSTER', 'RedisStore model properties on the cluster', () => {
  for (const encoding of LOG_ENCODINGS) {
    defineModelProperties(
      `RedisStore (cluster, ${encoding.name})`,
      () => {
        cluster ??= new Cluster(servers.redisCluster!);
        return new RedisStore({ client: cluster, prefix, minTtlMs: 600_000, packedLogMax: encoding.packedLogMax });
      },
      { numRuns: 50 },
    );
    defineDeferProperties(
      `RedisStore deferral (cluster, ${encoding.name})`,
      () => {
        cluster ??= new Cluster(servers.redisCluster!);
        return new RedisStore({ client: cluster, prefix, minTtlMs: 600_000, packedLogMax: encoding.packedLogMax });
      },
      { numRuns: 50 },
    );
  }
});

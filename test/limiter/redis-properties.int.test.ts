/**
 * The shared model properties (test/limiter/model-properties.ts) against RedisStore on the
 * standalone server: random sequences of checks, peeks, undos, bans and resets decide exactly as
 * the reference model does. Runs are kept modest; the conformance suite covers the hand-picked cases.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { RedisStore } from '../../src/limiter/stores/redis/redis-store.js';
import { describeWith, servers } from '../support/servers.js';
import { LOG_ENCODINGS } from './log-encodings.js';
import { defineModelProperties } from './model-properties.js';

const prefix = `test:rprop:${randomUUID().slice(0, 8)}`;
let client: Redis | undefined;

afterAll(async () => {
  if (!client) return;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
  client.disconnect();
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'RedisStore model properties', () => {
  for (const encoding of LOG_ENCODINGS) {
    defineModelProperties(
      `RedisStore (standalone, ${encoding.name})`,
      () => {
        client ??= new Redis(servers.redisUrl!);
        // TTLs run on Redis's clock while the sequences' times are explicit: keep keys long enough.
        return new RedisStore({ client, prefix, minTtlMs: 600_000, packedLogMax: encoding.packedLogMax });
      },
      { numRuns: 150 },
    );
  }
});

/**
 * A dependency away is told in sluice's words (src/infra/outage.ts), from the errors the real
 * drivers raise against a port nothing listens on; anything else is not an outage.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { expect, it } from 'vitest';
import { outageReason } from '../../src/infra/outage.js';
import { freePort } from '../support/net.js';

it('names ioredis\'s "max retries per request" and a refused PostgreSQL connection in sluice\'s words; a bug is not an outage', async () => {
  const port = await freePort();
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  redis.on('error', () => {});
  const redisError = await redis.get('x').catch((error: unknown) => error);
  redis.disconnect();
  expect((redisError as Error).message).toContain('max retries per request');
  expect(outageReason(redisError)).toBe('Redis did not answer (sluice keeps reconnecting)');

  const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x' });
  const pgError = await client.connect().catch((error: unknown) => error);
  expect(outageReason(pgError)).toBe(`127.0.0.1:${port} refused the connection`);
  // Wrapped (a repository adding context) is still the outage it wraps.
  expect(outageReason(new Error('claim failed', { cause: pgError }))).toBe(`127.0.0.1:${port} refused the connection`);

  expect(outageReason(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeUndefined();
  expect(outageReason('a string')).toBeUndefined();
});

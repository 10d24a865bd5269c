/**
 * The failure limit on authentication with Redis: two instances count into one log per address,
 * and failures still on their way to Redis already count against a burst.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.js';
import { AddressFailureLimit } from '../../src/http/auth-failures.js';
import { systemClock } from '../../src/limiter/clock.js';
import type { Runtime } from '../../src/main/runtime.js';
import { tempDir, testEnv, testRuntime } from '../delivery/delivery-support.js';
import { describeWith, servers } from '../support/servers.js';

const TOKEN = 'an-admin-token-long-enough-for-serve';
const LIMIT = 5;

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'wrong credentials counted in Redis', () => {
  const temp = tempDir();
  let a: Runtime;
  let b: Runtime;
  let appA: FastifyInstance;
  let appB: FastifyInstance;

  beforeAll(async () => {
    const env = testEnv(temp.dir, servers.redisUrl, {
      SLUICE_REDIS_KEY_PREFIX: `test:auth:${randomUUID().slice(0, 8)}:`,
      SLUICE_ADMIN_TOKEN: TOKEN,
      SLUICE_AUTH_FAILURE_LIMIT: String(LIMIT),
    });
    a = await testRuntime(env);
    b = await testRuntime(env);
    appA = await buildHttpApp(a.http);
    appB = await buildHttpApp(b.http);
  });
  afterAll(async () => {
    await appA?.close();
    await appB?.close();
    await a?.close();
    await b?.close();
    temp.cleanup();
  });

  const admin = (app: FastifyInstance, token: string, remoteAddress: string) =>
    app.inject({ method: 'GET', url: '/v1/admin/tenants', remoteAddress, headers: { authorization: `Bearer ${token}` } });

  it('two instances share the count: the limit holds across them, each checking at most one more before it learns', async () => {
    const address = '198.51.100.20';
    for (let i = 0; i < 3; i++) expect((await admin(appA, `a-${i}`, address)).statusCode).toBe(401);
    for (let i = 0; i < 2; i++) expect((await admin(appB, `b-${i}`, address)).statusCode).toBe(401);
    // B filled the window and knows it; A learns it from Redis with its next wrong guess.
    expect((await admin(appB, TOKEN, address)).statusCode).toBe(429);
    expect((await admin(appA, 'a-last', address)).statusCode).toBe(401);
    expect((await admin(appA, TOKEN, address)).statusCode).toBe(429);
    expect((await admin(appA, TOKEN, '198.51.100.21')).statusCode).toBe(200);
  });

  it('failures still on their way to Redis count already: a burst is refused past the limit', async () => {
    const limit = new AddressFailureLimit({ limit: 3, windowMs: 60_000, clock: systemClock, limiter: a.backend.limiter });
    const address = `192.0.2.${Math.floor(Math.random() * 200) + 1}`;
    const inFlight = [];
    for (let i = 0; i < 3; i++) {
      expect(limit.blockedFor(address)).toBe(0);
      inFlight.push(limit.failed(address));
    }
    expect(limit.blockedFor(address)).toBe(60_000);
    await Promise.all(inFlight);
    expect(limit.blockedFor(address)).toBeGreaterThan(59_000);
  });
});

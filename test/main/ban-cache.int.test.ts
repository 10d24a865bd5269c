/**
 * The ban cache as sluice wires it: two runtimes on one Redis and one database. A recipient banned
 * in Redis is answered in process (no Redis call: `sluice_limiter_cache_lookups_total`), and a ban
 * lifted through one instance, or a rule change, is dropped on the other at once (change bus).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { frequencySubject } from '../../src/admission/interceptors/frequency.js';
import type { Runtime } from '../../src/main/runtime.js';
import { tempDir, testEnv, testRuntime } from '../delivery/delivery-support.js';
import { describeWith, servers } from '../support/servers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'ban cache across instances', () => {
  let a: Runtime;
  let b: Runtime;
  let tenant: { id: string; apiKey: string };
  const temp = tempDir();

  beforeAll(async () => {
    // A config cache of ten minutes: only the bus can explain a change seen at once.
    const env = testEnv(temp.dir, servers.redisUrl, {
      SLUICE_REDIS_KEY_PREFIX: `test:bans:${randomUUID().slice(0, 8)}:`,
      SLUICE_CONFIG_CACHE_MS: '600000',
    });
    a = await testRuntime(env);
    b = await testRuntime(env);
    tenant = await a.http.tenants.createTenant(`bans-${Date.now()}`);
    await a.http.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 60, limit: 1, banSeconds: 600 }]);
    await sleep(200); // both subscribed
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    temp.cleanup();
  });

  const send = (runtime: Runtime, to: string) =>
    runtime.http.messages.send(tenant.apiKey, { channel: 'sms', to, body: 'code 1234' }).then(
      () => 'OK',
      (error: { code: string }) => error.code,
    );
  const banHits = async (runtime: Runtime) => {
    const line = (await runtime.metrics.text())
      .split('\n')
      .find((l) => l.startsWith('sluice_limiter_cache_lookups_total{cache="ban",result="hit"}'));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('answers a banned recipient without Redis, and drops it everywhere on unban and on a rule change', async () => {
    const to = '+8613800138001';
    expect(await send(a, to)).toBe('OK');
    expect(await send(a, to)).toBe('RATE_LIMITED'); // banned now
    expect(await send(b, to)).toBe('BANNED'); // b learns the ban from Redis
    const hits = await banHits(b);
    expect(await send(b, to)).toBe('BANNED');
    expect(await banHits(b)).toBe(hits + 1);

    // Lifted through a: b's cached copy is dropped by the bus.
    await a.http.bans.liftBan(tenant.id, 'sms', to, { resetCounts: true });
    await sleep(100);
    expect(await send(b, to)).toBe('OK');

    // Banned again; a rule change (published `tenant:<id>`) drops it too, although Redis still bans.
    expect(await send(b, to)).toBe('RATE_LIMITED');
    expect(await send(b, to)).toBe('BANNED');
    await b.backend.limiter.store.unban(frequencySubject(tenant.id, 'sms', to));
    expect(await send(b, to)).toBe('BANNED'); // lifted behind the cache's back: still cached
    await a.http.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 60, limit: 5, banSeconds: 600 }]);
    await sleep(100);
    expect(await send(b, to)).toBe('OK');
  });
});

/**
 * What `createRuntime` wires, on a real runtime: the risk-control service (behind
 * `POST /v1/frequency/check`), the calls that have no fallback when Redis cannot be reached, and
 * `serve`'s warm-up of the limiter.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { SluiceError } from '../../src/core/errors.js';
import { scripts } from '../../src/limiter/stores/redis/lua-script.js';
import type { Runtime } from '../../src/main/runtime.js';
import { tempDir, testEnv, testRuntime } from '../delivery/delivery-support.js';
import { freePort } from '../support/net.js';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../support/private-redis.js';
import { describeWith } from '../support/servers.js';

const oneAMinute = [{ windowMs: 60_000, limit: 1 }];
let runtime: Runtime | undefined;
let cleanup = () => {};
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  cleanup();
});

async function start(extra: Record<string, string> = {}) {
  const temp = tempDir();
  cleanup = temp.cleanup;
  runtime = await testRuntime(testEnv(temp.dir, undefined, extra));
  const tenant = await runtime.http.tenants.createTenant(`risk-${Date.now()}`);
  return { runtime, tenant };
}

describe('runtime', () => {
  it('keeps subject and action apart: "c:a" doing "b" is not "a" doing "b:c"', async () => {
    const { runtime, tenant } = await start();
    const first = await runtime.http.frequencyChecks.check(tenant.id, { subject: 'c:a', action: 'b', rules: oneAMinute, record: true });
    const second = await runtime.http.frequencyChecks.check(tenant.id, { subject: 'a', action: 'b:c', rules: oneAMinute, record: true });
    expect([first.code, second.code]).toEqual(['OK', 'OK']);
    const again = await runtime.http.frequencyChecks.check(tenant.id, { subject: 'a', action: 'b:c', rules: oneAMinute, record: true });
    expect(again.code).toBe('RATE_LIMITED');
  });

  it('answers a suspended tenant TENANT_SUSPENDED, as every other tenant call', async () => {
    const { runtime, tenant } = await start();
    await runtime.http.tenants.updateTenant(tenant.id, { status: 'suspended' });
    await expect(
      runtime.http.frequencyChecks.check(tenant.id, { subject: 'u1', action: 'login', rules: oneAMinute, record: true }),
    ).rejects.toMatchObject({
      code: 'TENANT_SUSPENDED',
    });
  });

  it('counts recorded decisions in sluice_decisions_total with channel="none"', async () => {
    const { runtime, tenant } = await start();
    for (let i = 0; i < 2; i++)
      await runtime.http.frequencyChecks.check(tenant.id, { subject: 'u1', action: 'login', rules: oneAMinute, record: true });
    await runtime.http.frequencyChecks.check(tenant.id, { subject: 'u1', action: 'login', rules: oneAMinute, record: false });
    const text = await runtime.metrics.text();
    expect(text).toContain('sluice_decisions_total{outcome="OK",channel="none",rule="none"} 1');
    expect(text).toContain('sluice_decisions_total{outcome="RATE_LIMITED",channel="none",rule="0"} 1');
  });

  it('a read-only look with Redis unreachable is 503 UNAVAILABLE, not a 500', async () => {
    const port = await freePort(); // nothing listens there
    const { runtime, tenant } = await start({ SLUICE_REDIS_URL: `redis://127.0.0.1:${port}`, SLUICE_REDIS_COMMAND_TIMEOUT_MS: '200' });
    const look = runtime.http.frequencyChecks.check(tenant.id, { subject: 'u1', action: 'login', rules: oneAMinute, record: false });
    await expect(look).rejects.toBeInstanceOf(SluiceError);
    await expect(look).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('a refusal made by a fallback names the rule that refused: a static rule, or none in deny mode', async () => {
    const port = await freePort(); // nothing listens there: every decision falls back
    const { runtime, tenant } = await start({
      SLUICE_REDIS_URL: `redis://127.0.0.1:${port}`,
      SLUICE_REDIS_COMMAND_TIMEOUT_MS: '200',
      SLUICE_FALLBACK_DIVIDE_BY: '2',
    });
    const send = (to: string) => runtime.http.messages.send(tenant.apiKey, { channel: 'sms', to, body: 'code 1234' });
    await runtime.http.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 60, limit: 3, banSeconds: 0 }], {
      mode: 'static',
      rules: [{ windowSeconds: 3600, limit: 1, banSeconds: 0 }],
    });
    await send('+8613800138021');
    await expect(send('+8613800138021')).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      message: 'at most 1 sms message per 3600 s to this recipient',
      details: { rule: 0, windowSeconds: 3600, limit: 1 },
    });
    // A risk check says which fallback answered.
    const look = await runtime.http.frequencyChecks.check(tenant.id, { subject: 'u1', action: 'login', rules: oneAMinute, record: true });
    expect(look).toMatchObject({ allowed: true, degraded: 'local' });
    // The local fallback's share of the channel's rules (SLUICE_FALLBACK_DIVIDE_BY=2: 3 → 2).
    await runtime.http.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 60, limit: 3, banSeconds: 0 }], { mode: 'local' });
    await send('+8613800138023');
    await send('+8613800138023');
    await expect(send('+8613800138023')).rejects.toMatchObject({ message: 'at most 2 sms messages per 60 s to this recipient' });
    await runtime.http.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 60, limit: 3, banSeconds: 0 }], { mode: 'deny' });
    await expect(send('+8613800138022')).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      message: 'frequency control is degraded and refuses sends until it recovers; retry later',
    });
  });

  it('lifting a ban with Redis unreachable is 503 UNAVAILABLE, not a 500', async () => {
    const port = await freePort();
    const { runtime, tenant } = await start({ SLUICE_REDIS_URL: `redis://127.0.0.1:${port}`, SLUICE_REDIS_COMMAND_TIMEOUT_MS: '200' });
    await expect(runtime.http.bans.liftBan(tenant.id, 'sms', '+8613800138000')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'with a Redis of its own', () => {
    let redis: PrivateRedis | undefined;
    afterEach(async () => {
      await redis?.stop();
    });

    it("serve's warm-up (called before it listens) loads the limiter's script: a start's first burst must not open the breaker", async () => {
      redis = await startPrivateRedis();
      const { runtime } = await start({ SLUICE_REDIS_URL: redis.url });
      await runtime.backend.warmUp();
      const client = new Redis(redis.url);
      try {
        expect(await client.script('EXISTS', scripts.checkBatch.sha)).toEqual([1]);
      } finally {
        client.disconnect();
      }
    });
  });
});

/**
 * The embedded default keeps its limiter across a restart: a serving process saves its bans and
 * counts in the database when it stops, and the next one on that database restores them before
 * its first decision. Two processes' worth of runtimes, one after the other, on one SQLite file.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, MemoryStore } from '../../src/limiter/index.js';
import { createRuntime } from '../../src/main/runtime.js';
import { type Service, startRoles } from '../../src/main/service.js';
import { loadSettings } from '../../src/settings/settings.js';
import { silentConsole, tempDir, testEnv } from '../delivery/delivery-support.js';

const temp = tempDir();
afterAll(() => temp.cleanup());

/** `serve --roles api` on the shared SQLite file, without Redis. */
async function serve(extra: Record<string, string> = {}): Promise<Service> {
  const env = testEnv(temp.dir, undefined, { SLUICE_HOST: '127.0.0.1', SLUICE_PORT: '0', SLUICE_ROLES: 'api', ...extra });
  return startRoles(await createRuntime(loadSettings(env, undefined)), { fallbackProvider: silentConsole() });
}

const send = async (service: Service, apiKey: string, to: string) => {
  const response = await fetch(`${service.address}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ channel: 'sms', to, body: 'code 1234' }),
  });
  const body = (await response.json()) as { error?: { code: string } };
  return response.status === 202 ? 'accepted' : (body.error?.code ?? String(response.status));
};

describe('the embedded limiter across a restart', () => {
  it('keeps a ban and the counts of the minute: a number banned before the restart is refused after it', async () => {
    const first = await serve();
    // The seed rules (SLUICE_NEW_TENANT_RULES): 3 a minute, a breach bans the number 10 minutes.
    const tenant = await first.services.tenants.createTenant('restart');
    const banned = '+8613800000001';
    const counted = '+8613800000002';
    for (let i = 0; i < 3; i++) expect(await send(first, tenant.apiKey, banned)).toBe('accepted');
    expect(await send(first, tenant.apiKey, banned)).toBe('RATE_LIMITED');
    expect(await send(first, tenant.apiKey, banned)).toBe('BANNED');
    for (let i = 0; i < 2; i++) expect(await send(first, tenant.apiKey, counted)).toBe('accepted');
    await first.stop();

    const second = await serve();
    try {
      expect(await send(second, tenant.apiKey, banned)).toBe('BANNED');
      expect(await send(second, tenant.apiKey, counted)).toBe('accepted');
      expect(await send(second, tenant.apiKey, counted)).toBe('RATE_LIMITED');
    } finally {
      await second.stop();
    }
  });

  it('forgets them with SLUICE_LIMITER_SNAPSHOT_MS=0', async () => {
    const first = await serve({ SLUICE_LIMITER_SNAPSHOT_MS: '0' });
    const tenant = await first.services.tenants.createTenant('no-snapshots');
    const number = '+8613800000003';
    for (let i = 0; i < 3; i++) await send(first, tenant.apiKey, number);
    expect(await send(first, tenant.apiKey, number)).toBe('RATE_LIMITED');
    await first.stop();
    const second = await serve({ SLUICE_LIMITER_SNAPSHOT_MS: '0' });
    try {
      expect(await send(second, tenant.apiKey, number)).toBe('accepted');
    } finally {
      await second.stop();
    }
  });
});

describe('a snapshot of the in-process store', () => {
  const rules = [{ windowMs: 60_000, limit: 2, banMs: 600_000, algorithm: 'sliding-log' as const }];

  it('is bounded: banned subjects first, then the others while entries remain', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock });
    for (let n = 0; n < 50; n++) await store.check({ subject: `s${n}`, rules, requestId: `r${n}`, now: undefined });
    for (let i = 0; i < 3; i++) await store.check({ subject: 'banned', rules, requestId: `b${i}`, now: undefined });
    const snapshot = store.snapshot(10);
    expect(snapshot.subjects[0]).toMatchObject({ s: 'banned', b: [1_600_000, 1_600_000] });
    const entries = snapshot.subjects.reduce((sum, subject) => sum + 1 + (subject.l?.length ?? 0) + (subject.f?.length ?? 0), 0);
    expect(entries).toBeLessThanOrEqual(10);

    // Restored into a new store later on: the ban holds for what is left of it; what expired is not restored.
    clock.advance(120_000);
    const restored = new MemoryStore({ clock });
    expect(restored.restore(snapshot)).toBe(1);
    expect(await restored.check({ subject: 'banned', rules, requestId: 'b9', now: undefined })).toMatchObject({
      allowed: false,
      code: 'BANNED',
      retryAfterMs: 480_000,
    });
  });

  it("keeps the logged request ids: a restored attempt's id repeated after the restart is not counted again", async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock });
    expect(await store.check({ subject: 'one', rules, requestId: 'r1', now: undefined })).toMatchObject({ allowed: true });
    const restored = new MemoryStore({ clock });
    expect(restored.restore(store.snapshot(100))).toBe(1);
    // r1 again is the same attempt; r2 is the second of two allowed; r3 is over the limit.
    expect(await restored.check({ subject: 'one', rules, requestId: 'r1', now: undefined })).toMatchObject({ allowed: true });
    expect(await restored.check({ subject: 'one', rules, requestId: 'r2', now: undefined })).toMatchObject({ allowed: true });
    expect(await restored.check({ subject: 'one', rules, requestId: 'r3', now: undefined })).toMatchObject({ allowed: false });
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../support/net.js';
import { describeWith, servers } from '../support/servers.js';

const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;

async function waitReady(base: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) throw new Error(`instance exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${base} did not start`);
}

/**
 * Two service processes on one Redis and one database: a rule change made through one is enforced
 * by the other within a second, although the other had the old rules in its local cache
 * (SLUICE_CONFIG_CACHE_MS is ten minutes here, so only the pub/sub invalidation can explain it).
 */
describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'live configuration across instances', () => {
  const children: ChildProcess[] = [];
  const bases: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-live-'));
    const env = {
      ...process.env,
      SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
      SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
      SLUICE_REDIS_URL: servers.redisUrl,
      SLUICE_ADMIN_TOKEN: 'live-admin',
      SLUICE_ROLES: 'api',
      SLUICE_CONFIG_CACHE_MS: '600000',
      SLUICE_LOG_LEVEL: 'warn',
    };
    // The first instance migrates the database alone; then the second starts.
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', cli, 'serve'], {
        env: { ...env, SLUICE_PORT: String(port) },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      children.push(child);
      bases.push(`http://127.0.0.1:${port}`);
      await waitReady(bases[i]!, child);
    }
  }, 60_000);

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  it('a rule change through instance A is enforced by instance B within 1 s', async () => {
    const [a, b] = bases as [string, string];
    const admin = { Authorization: 'Bearer live-admin', 'Content-Type': 'application/json' };
    const tenant = (await (
      await fetch(`${a}/v1/admin/tenants`, { method: 'POST', headers: admin, body: JSON.stringify({ name: `live-${Date.now()}` }) })
    ).json()) as {
      id: string;
      apiKey: string;
    };
    const setLimit = (limit: number) =>
      fetch(`${a}/v1/admin/tenants/${tenant.id}/rules/sms`, {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ rules: [{ windowSeconds: 60, limit, banSeconds: 0 }] }),
      });
    expect((await setLimit(1)).status).toBe(200);
    const send = (base: string, to: string) =>
      fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', to, body: 'hello' }),
      });

    // B loads and caches limit 1.
    expect((await send(b, '+8613800138001')).status).toBe(202);
    expect((await send(b, '+8613800138001')).status).toBe(429);

    expect((await setLimit(5)).status).toBe(200);
    const changedAt = Date.now();
    let status = 429;
    while (status === 429 && Date.now() - changedAt < 1000) {
      status = (await send(b, '+8613800138001')).status;
      if (status === 429) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(202);
    console.log(`rule change visible on the other instance after ${Date.now() - changedAt} ms`);

    // And back down: B enforces the stricter rule again.
    expect((await setLimit(1)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await send(b, '+8613800138001')).status).toBe(429);
  });
});

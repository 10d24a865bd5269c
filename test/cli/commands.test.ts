import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const run = promisify(execFile);
const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/** The operator commands on one SQLite database, each a real `sluice` process; `send` goes through a running server. */
describe('sluice CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
    SLUICE_ADMIN_TOKEN: 'cli-admin-secret',
    // The CLI changes the database behind the server's back: no cache, so the server sees them at once.
    SLUICE_CONFIG_CACHE_MS: '0',
  };
  let server: ChildProcess | undefined;
  afterAll(() => {
    server?.kill('SIGTERM');
  });

  const attempt = (args: string[], extraEnv: Record<string, string> = {}) =>
    run(process.execPath, ['--import', tsx, cli, ...args], { env: { ...env, ...extraEnv }, cwd: dir }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );
  const sluice = async (...args: string[]) => {
    const result = await attempt(args);
    if (result.code !== 0) throw new Error(`sluice ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };

  it('migrates, manages tenants and rules, sends through the server, and checks the config', async () => {
    expect(await sluice('migrate')).toMatch(/applied: 0001|up to date/);
    expect(await sluice('migrate')).toContain('up to date');

    const tenant = JSON.parse(await sluice('tenant', 'create', 'acme')) as { id: string; apiKey: string };
    expect(tenant.apiKey).toMatch(/^sk_/);
    expect(await sluice('tenant', 'list')).toContain('"name": "acme"');

    await sluice('rules', 'set', tenant.id, 'sms', '60:1:600', '3600:10');
    const shown = JSON.parse(await sluice('rules', 'show', tenant.id, 'sms')) as { rules: unknown[] };
    expect(shown.rules).toEqual([
      { windowSeconds: 60, limit: 1, banSeconds: 600 },
      { windowSeconds: 3600, limit: 10, banSeconds: 0 },
    ]);
    expect((await attempt(['rules', 'set', tenant.id, 'sms', 'sixty:1'])).stderr).toContain('WINDOW_SECONDS:LIMIT');

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    expect(
      (await attempt(['send', '--url', url, '--key', tenant.apiKey, '--channel', 'sms', '--to', '13800138000', '--body', 'hi'])).stderr,
    ).toContain('UNAVAILABLE');
    server = spawn(process.execPath, ['--import', tsx, cli, 'serve', '--roles', 'api'], {
      env: { ...env, SLUICE_PORT: String(port) },
      cwd: dir,
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const send = (to: string) => attempt(['send', '--url', url, '--key', tenant.apiKey, '--channel', 'sms', '--to', to, '--body', 'hi']);
    const sent = await send('13800138000');
    expect(JSON.parse(sent.stdout)).toMatchObject({ status: 'queued' });
    const limited = await send('+8613800138000');
    expect(limited.code).toBe(1);
    expect(limited.stderr).toContain('RATE_LIMITED');

    expect(await sluice('tenant', 'suspend', tenant.id)).toContain('suspended');
    expect((await send('+8613800138001')).stderr).toContain('TENANT_SUSPENDED');

    const config = await sluice('config', 'check');
    expect(config).toContain('SLUICE_ADMIN_TOKEN=***');
    expect(config).not.toContain('cli-admin-secret');
    expect(config).toContain('settings OK');
    const bad = await attempt(['config', 'check'], { SLUICE_PORT: 'eighty' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('SLUICE_PORT must be an integer');
  }, 90_000);
});

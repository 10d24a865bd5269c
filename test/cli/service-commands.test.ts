/**
 * The CLI beside a running server on the embedded default (SQLite, no Redis), each a real process:
 * `messages list` asks the server with the tenant's key; a change made with the CLI reaches the
 * server within about a second (the database's change log, 0022), not SLUICE_CONFIG_CACHE_MS later.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const run = promisify(execFile);
const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

// Each command is a process that builds a runtime: seconds apiece, tens of seconds on a loaded machine.
describe('the CLI beside a running server', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-service-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
    // Ten minutes: only the change log can bring a CLI change to the server in time.
    SLUICE_CONFIG_CACHE_MS: '600000',
  };
  let server: ChildProcess | undefined;
  let url = '';
  let tenant: { id: string; apiKey: string };

  const attempt = (args: string[]) =>
    run(process.execPath, ['--import', tsx, cli, ...args], { env, cwd: dir }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );
  const sluice = async (...args: string[]) => {
    const result = await attempt(args);
    if (result.code !== 0) throw new Error(`sluice ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };
  const send = (to: string) =>
    fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ channel: 'sms', to, body: 'hi' }),
    }).then(async (response) => (await response.json()) as { id?: string; status?: string; error?: { code: string } });

  beforeAll(async () => {
    await sluice('migrate');
    tenant = JSON.parse(await sluice('tenant', 'create', 'acme')) as { id: string; apiKey: string };
    // Enough sends to one recipient for the test's polling never to meet the frequency rule.
    await sluice('rules', 'set', tenant.id, 'sms', '60:1000');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, ['--import', tsx, cli, 'serve', '--roles', 'api'], {
      env: { ...env, SLUICE_PORT: String(port) },
      cwd: dir,
      stdio: 'ignore',
    });
    for (;;) {
      const up = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 240_000);
  afterAll(() => {
    server?.kill('SIGTERM');
  });

  it("messages list: the key's tenant's messages through the service, narrowed and paged", async () => {
    const first = await send('+8613800138000');
    const second = await send('+8613800138001');
    expect(first.status).toBe('queued');
    const list = async (...args: string[]) => {
      const page = await sluice('messages', 'list', '--url', url, '--key', tenant.apiKey, ...args);
      return JSON.parse(page) as { messages: { id: string }[]; nextCursor?: string };
    };
    const ids = (page: { messages: { id: string }[] }) => page.messages.map((message) => message.id);
    expect(ids(await list())).toEqual([second.id, first.id]);
    expect(ids(await list('--to', '13800138000', '--channel', 'sms'))).toEqual([first.id]);
    expect(ids(await list('--to', '+8613800138001', '--status', 'delivered'))).toEqual([]);
    const page = await list('--limit', '1');
    expect(ids(page)).toEqual([second.id]);
    expect(ids(await list('--limit', '1', '--cursor', page.nextCursor ?? ''))).toEqual([first.id]);
    const wrongKey = await attempt(['messages', 'list', '--url', url, '--key', 'sk_unknown']);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('UNAUTHORIZED');
    expect((await attempt(['messages', 'list', '--url', url, '--key', tenant.apiKey, '--status', 'lost'])).stderr).toContain(
      'is not a status',
    );
  });

  it('a recipient blacklisted with the CLI is refused by the running server within about a second', async () => {
    const to = '+8613800138009';
    // The server has the tenant's blacklist in memory, without this recipient.
    expect((await send(to)).status).toBe('queued');
    await sluice('blacklist', 'add', tenant.id, '--channel', 'sms', to);
    const added = Date.now();
    let answer = await send(to);
    while (answer.error?.code !== 'BLACKLISTED' && Date.now() - added < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await send(to);
    }
    expect(answer.error?.code).toBe('BLACKLISTED');
    // A poll every 250 ms, then the reload: well within a second on an idle machine; slack for a loaded one.
    expect(Date.now() - added).toBeLessThan(2_000);
  });
});

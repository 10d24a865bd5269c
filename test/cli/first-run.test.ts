/**
 * A first start: `serve` without `--demo` on a database without tenants says what to do next
 * (create a tenant, turn on the admin API, find the console) instead of a bare "serving".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it('serve on a new database prints the next steps: a tenant, the admin API, the console', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-first-run-'));
  dirs.push(dir);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', SLUICE_DB_URL: `sqlite:${join(dir, 'sluice.db')}` };
  Object.assign(env, { SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'), SLUICE_PORT: String(port), SLUICE_LOG_LEVEL: 'warn' });
  const child = spawn(process.execPath, ['--import', tsx, cli, 'serve'], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const done = /Or try the demo/;
  while (!done.test(output)) {
    if (child.exitCode !== null) throw new Error(`serve exited: ${output}`);
    await new Promise((resolve) => child.stdout!.once('data', resolve));
  }
  expect(output).toContain('which has no tenant yet. Next:');
  expect(output).toContain('npx sluice tenant create NAME');
  expect(output).toContain('are off until SLUICE_ADMIN_TOKEN is set');
  expect(output).toContain(`open http://127.0.0.1:${port}/console/`);
});

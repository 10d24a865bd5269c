/** `sluice suppress …` and `sluice consent …`: the admin API's suppressions and consent record from the command line. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../http/support.js';

const run = promisify(execFile);
const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

const sluice = (...args: string[]) =>
  run(process.execPath, ['--import', tsx, cli, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      SLUICE_DB_URL: `sqlite:${join(t.dir, 'db.sqlite')}`,
      SLUICE_SECRET_KEY_FILE: join(t.dir, 'secret.key'),
      SLUICE_LOG_LEVEL: 'silent',
    },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

it('suppresses, shows, lists, lifts and shows the consent record; refuses a bad channel', { timeout: 120_000 }, async () => {
  const { id, apiKey } = await t.createTenant();
  const added = await sluice('suppress', 'add', id, 'sms', '13800138077', '--category', 'news', '--reason', 'by letter');
  expect(added.code, added.stderr).toBe(0);
  expect(JSON.parse(added.stdout).suppression).toMatchObject({ recipient: '+8613800138077', category: 'news', source: 'admin' });
  expect(JSON.parse((await sluice('suppress', 'show', id, 'sms', '+8613800138077')).stdout).suppressed).toBe(true);
  expect(JSON.parse((await sluice('suppress', 'list', id, '--channel', 'sms')).stdout).entries).toHaveLength(1);
  const refused = await t.send(apiKey, { channel: 'sms', to: '+8613800138077', body: 'x', category: 'news' });
  expect(refused.json().error.code).toBe('RECIPIENT_SUPPRESSED');
  expect(JSON.parse((await sluice('suppress', 'remove', id, 'sms', '+8613800138077', '--category', 'news')).stdout)).toEqual({
    removed: true,
  });
  const history = JSON.parse((await sluice('consent', id, 'sms', '+8613800138077')).stdout);
  expect(history.records.map((record: { action: string }) => record.action)).toEqual(['suppressed', 'unsuppressed']);
  const bad = await sluice('suppress', 'show', id, 'fax', 'x');
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain('INVALID_REQUEST');
});

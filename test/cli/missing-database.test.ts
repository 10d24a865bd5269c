/**
 * A command other than `migrate` and `serve` works on a database that exists: run from another
 * folder (the default `sqlite:./data/sluice.db` is relative), or pointed at a server database
 * without sluice's tables, it is refused naming the database, and creates nothing (no file, no
 * folder, no secret key). A new SQLite file's folder is made, but not a chain of folders.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withServices } from '../../src/main/commands.js';
import { loadSettings } from '../../src/settings/settings.js';
import { DatabaseMissingError } from '../../src/storage/database.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const run = promisify(execFile);
const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/** `sluice ARGS` in `cwd` with only `env` set: its exit code and output. */
const sluice = (cwd: string, env: Record<string, string>, ...args: string[]) =>
  run(process.execPath, ['--import', tsx, cli, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

describe('a command on a database that is not there', { timeout: 60_000 }, () => {
  it('run from another folder, refuses naming the path, and creates no database, folder or key', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'sluice-elsewhere-'));
    const listed = await sluice(elsewhere, {}, 'tenant', 'list');
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(`no database at ${join(elsewhere, 'data', 'sluice.db')}`);
    expect(listed.stderr).toContain(`relative to ${elsewhere}`);
    expect(listed.stderr).toContain('sluice migrate');
    expect(listed.stdout).toBe('');
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
  });

  it('migrate makes the database folder, but not a missing folder above it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-folders-'));
    const deep = join(root, 'nonexistent', 'dir', 'x.db');
    const refused = await sluice(root, { SLUICE_DB_URL: `sqlite:${deep}`, SLUICE_LOG_LEVEL: 'silent' }, 'migrate');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the folder ${join(root, 'nonexistent')} does not exist`);
    expect(existsSync(join(root, 'nonexistent'))).toBe(false);

    const env = { SLUICE_DB_URL: `sqlite:${join(root, 'data', 'x.db')}`, SLUICE_LOG_LEVEL: 'silent' };
    expect((await sluice(root, env, 'migrate')).stdout).toContain('applied: 0001');
    expect(JSON.parse((await sluice(root, env, 'tenant', 'list')).stdout)).toEqual([]);
  });
});

for (const backend of backends.filter((b) => b.name !== 'sqlite')) {
  describeWith(backend.available, backend.variable, `a command on an empty ${backend.name} database`, () => {
    let database: { url: string; drop(): Promise<void> };
    beforeAll(async () => {
      database = await backend.create();
    });
    afterAll(async () => {
      await database?.drop();
    });

    it('is refused with "sluice migrate", and creates no table', async () => {
      const settings = loadSettings({ SLUICE_DB_URL: database.url, SLUICE_SECRET_KEY_FILE: join(tmpdir(), 'never-made.key') }, undefined);
      const refused = withServices(settings, (services) => services.tenants.listTenants());
      await expect(refused).rejects.toThrow(DatabaseMissingError);
      await expect(refused).rejects.toThrow(/no sluice tables in .*: create them with `sluice migrate`/);
      // Still nothing there: the refusal created no migration table either.
      await expect(withServices(settings, (services) => services.tenants.listTenants())).rejects.toThrow(DatabaseMissingError);
    });
  });
}

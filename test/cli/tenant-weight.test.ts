/** `sluice tenant create --send-weight N` and `sluice tenant set-weight ID N`: the admin API's range, its refusals in one line. */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../http/support.js';
import { type CliResult, sluice as runSluice } from '../support/cli.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

const sluice = (...args: string[]) =>
  runSluice(args, {
    SLUICE_DB_URL: `sqlite:${join(t.dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(t.dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
  });

it('creates a tenant with a send weight, changes it, and refuses one outside 1..100 as the API does', async () => {
  const created = await sluice('tenant', 'create', 'weighted', '--send-weight', '5');
  expect(created.code, created.stderr).toBe(0);
  const id = (JSON.parse(created.stdout) as { id: string }).id;
  expect((await t.runtime.repositories.tenants.get(id))?.sendWeight).toBe(5);

  const set = await sluice('tenant', 'set-weight', id, '9');
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout).toContain(`weighted (${id}) has send weight 9`);
  expect((await t.runtime.repositories.tenants.get(id))?.sendWeight).toBe(9);

  const refusals = [
    [['tenant', 'set-weight', id, '0'], 'INVALID_REQUEST: sendWeight: Expected integer to be greater or equal to 1'],
    [['tenant', 'set-weight', id, '101'], 'INVALID_REQUEST: sendWeight: Expected integer to be less or equal to 100'],
    [['tenant', 'set-weight', id, '1.5'], 'not an integer'],
    [['tenant', 'create', 'too-heavy', '--send-weight', '101'], 'INVALID_REQUEST: sendWeight'],
    [['tenant', 'set-weight', 'no-such-tenant', '2'], 'NOT_FOUND'],
  ] as const;
  const results: CliResult[] = [];
  for (const [args] of refusals) results.push(await sluice(...args));
  refusals.forEach(([args, expected], i) => {
    expect(results[i]!.code, args.join(' ')).toBe(1);
    expect(results[i]!.stderr).toContain(expected);
    expect(results[i]!.stderr).not.toMatch(/\n\s+at /);
  });
  expect((await t.runtime.repositories.tenants.get(id))?.sendWeight).toBe(9);
  expect(await t.runtime.repositories.tenants.findByName('too-heavy')).toBeUndefined();
});

/** `sluice tenant list` prints every tenant, however many pages the admin API takes to list them. */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../http/support.js';
import { sluice } from '../support/cli.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
  // More than one page of the largest size (1000).
  for (let i = 0; i < 1001; i++) await t.runtime.http.tenants.createTenant(`many-${i}`, null);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

it('sluice tenant list prints all 1,001 tenants', async () => {
  const { stdout } = await sluice(['tenant', 'list'], {
    SLUICE_DB_URL: `sqlite:${join(t.dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(t.dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
  });
  const tenants = JSON.parse(stdout) as { name: string }[];
  expect(tenants).toHaveLength(1001);
  expect(new Set(tenants.map((tenant) => tenant.name)).size).toBe(1001);
}, 60_000);

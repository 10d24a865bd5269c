/**
 * The SMS spend ledger (migration 0011) on every backend: two repositories on one database, as two
 * instances, reserve at once against one cap on a month whose row does not exist yet. The cap
 * holds exactly, whatever each batch's grouping, and a release never takes the month below zero.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRepositories, type Database, migrateToLatest, openDatabase, type Repositories } from '../../src/storage/index.js';
import { SmsSpendRepository } from '../../src/storage/repositories/sms-spend.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const T0 = 1_700_000_000_000;

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `SMS spend on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let databases: Database[] = [];
    let instances: (Repositories & { smsSpend: SmsSpendRepository })[] = [];

    beforeAll(async () => {
      created = await backend.create();
      databases = [await openDatabase(created.url), await openDatabase(created.url)];
      await migrateToLatest(databases[0]!);
      instances = databases.map((database) => Object.assign(createRepositories(database), { smsSpend: new SmsSpendRepository(database) }));
    });
    afterAll(async () => {
      for (const repos of instances) await repos.close();
      await created?.drop();
    });

    it('holds a cap exactly under concurrent reserves from two instances, creating the month on the first', async () => {
      const tenant = (await instances[0]!.tenants.create({ name: `spend_${process.pid}_${Date.now()}` })).tenant;
      // 0.05 each against a cap of 1.00: 20 of 60 fit, whichever instance and batch they go in.
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => instances[i % 2]!.smsSpend.reserve(tenant.id, '2026-12', 50_000, 1_000_000, T0)),
      );
      expect(answers.filter(Boolean)).toHaveLength(20);
      expect(await instances[0]!.smsSpend.spent(tenant.id, '2026-12')).toBe(1_000_000);
      // Another month is its own row; a release gives back, never below zero.
      expect(await instances[1]!.smsSpend.reserve(tenant.id, '2027-01', 50_000, 1_000_000, T0)).toBe(true);
      await instances[1]!.smsSpend.release(tenant.id, '2026-12', 50_000, T0);
      expect(await instances[0]!.smsSpend.spent(tenant.id, '2026-12')).toBe(950_000);
      await instances[0]!.smsSpend.release(tenant.id, '2027-01', 200_000, T0);
      expect(await instances[0]!.smsSpend.spent(tenant.id, '2027-01')).toBe(0);
      expect(await instances[0]!.smsSpend.reserve(tenant.id, '2026-12', 50_000, 1_000_000, T0)).toBe(true);
      expect(await instances[1]!.smsSpend.reserve(tenant.id, '2026-12', 1, 1_000_000, T0)).toBe(false);
    });
  });
}

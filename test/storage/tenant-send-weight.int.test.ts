/**
 * Migration 0018 and `TenantsRepository.sendWeights()` on every database: existing tenants get
 * weight 1, the column refuses a weight outside 1..100 whatever writes it, and the migration
 * goes down and up again.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { type Database, migrateToLatest, migrationsFor, openDatabase, TenantsRepository } from '../../src/storage/index.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `tenant send weight (0018) on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let database: Database;
    beforeAll(async () => {
      created = await backend.create();
      database = await openDatabase(created.url);
      await migrateToLatest(database);
    });
    afterAll(async () => {
      await database?.close();
      await created?.drop();
    });

    it('gives existing tenants weight 1, refuses 0 and 101 in the table, and goes down and up', async () => {
      const migration = migrationsFor(database.dialect)['0018-tenant-send-weight']!;
      await migration.down!(database.db);
      // A tenant as a build before 0018 stored it.
      await sql`INSERT INTO tenants (id, name, status, qps_limit, created_at, updated_at) VALUES (${'old'}, ${'before-0018'}, ${'active'}, ${null}, ${1}, ${1})`.execute(
        database.db,
      );
      await migration.up(database.db);

      const tenants = new TenantsRepository(database, { clock: new ManualClock(1_700_000_000_000) });
      expect((await tenants.get('old'))?.sendWeight).toBe(1);
      const heavy = (await tenants.create({ name: 'heavy', sendWeight: 100 })).tenant;
      expect(heavy.sendWeight).toBe(100);
      expect((await tenants.update('old', { sendWeight: 7 }))?.sendWeight).toBe(7);
      expect(await tenants.sendWeights()).toEqual(
        new Map([
          ['old', 7],
          [heavy.id, 100],
        ]),
      );

      for (const weight of [0, 101]) {
        await expect(database.db.updateTable('tenants').set({ send_weight: weight }).where('id', '=', 'old').execute()).rejects.toThrow();
        await expect(tenants.update('old', { sendWeight: weight })).rejects.toThrow(RangeError);
      }
      expect((await tenants.get('old'))?.sendWeight).toBe(7);

      await migration.down!(database.db);
      await migration.up(database.db);
      expect(await tenants.sendWeights()).toEqual(
        new Map([
          ['old', 1],
          [heavy.id, 1],
        ]),
      );
    });
  });
}

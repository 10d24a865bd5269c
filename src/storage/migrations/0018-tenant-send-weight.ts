/**
 * 0018: `tenants.send_weight`, a tenant's share of the shared delivery pools (issue 32): the
 * fair order gives a tenant of weight 3 three sends for one of a tenant of weight 1 while both
 * have due messages. 1 to 100, 1 for every existing tenant; the CHECK keeps a value the API
 * would refuse out of the table whatever writes it.
 */
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../database.js';

export const tenantSendWeightMigration = (_dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('tenants')
      .addColumn('send_weight', 'integer', (c) => c.notNull().defaultTo(1).check(sql`send_weight BETWEEN 1 AND 100`))
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.alterTable('tenants').dropColumn('send_weight').execute();
  },
});

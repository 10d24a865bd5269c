/**
 * 0003: an index on `tenants(status)`. Every claim and due query reads the suspended tenants
 * (`tenant_id NOT IN (SELECT id FROM tenants WHERE status = 'suspended')`); without it that is a
 * scan of every tenant per statement.
 */
import type { Kysely, Migration } from 'kysely';
import { DIALECT_CAPABILITIES, type Dialect } from '../database.js';

export const tenantStatusIndexMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    await db.schema.createIndex('tenants_status').on('tenants').column('status').execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    const drop = db.schema.dropIndex('tenants_status');
    await (DIALECT_CAPABILITIES[dialect].indexNamedByTable ? drop.on('tenants') : drop).execute();
  },
});

/**
 * 0022: `config_changes`, the change bus of instances that share a database without Redis (issue
 * 39): a CLI command or another instance appends the key it changed, every running instance reads
 * the rows of the last seconds (every 250 ms) and drops its cached copy, instead of holding it up
 * to SLUICE_CONFIG_CACHE_MS. Rows live a minute; no sequence, so one code path on every dialect.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export const configChangesMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const t = columnTypes(dialect);
    await t
      .table(db.schema.createTable('config_changes'))
      .addColumn('id', t.id, (c) => c.primaryKey())
      .addColumn('change_key', t.shortText, (c) => c.notNull())
      .addColumn('origin', t.id, (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('config_changes_created_at').on('config_changes').column('created_at').execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.dropTable('config_changes').execute();
  },
});

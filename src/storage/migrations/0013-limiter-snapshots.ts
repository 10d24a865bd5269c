/**
 * 0013: `limiter_snapshots`, where the embedded default keeps its in-process limiter's bans and
 * counts across a restart (one row per name, replaced at each save; a JSON body bounded by
 * SLUICE_LIMITER_SNAPSHOT_MAX_BYTES, within MySQL's MEDIUMTEXT).
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export const limiterSnapshotsMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const t = columnTypes(dialect);
    await t
      .table(db.schema.createTable('limiter_snapshots'))
      .addColumn('name', t.id, (c) => c.primaryKey())
      .addColumn('taken_at', 'bigint', (c) => c.notNull())
      .addColumn('body', t.longText, (c) => c.notNull())
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.dropTable('limiter_snapshots').execute();
  },
});

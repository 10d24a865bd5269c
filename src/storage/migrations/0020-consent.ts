/**
 * 0020: the recipient's word (issue 36). `suppressions` holds who must not be sent to now, per
 * tenant, channel, canonical recipient key and category (`*`: every category); `consent_records`
 * is the append-only history of every opt-out, opt-in and suppression change, with its source
 * and evidence (never updated, never deleted but with its tenant); `consent_policies` a tenant's
 * keywords, replies, transactional categories and transient-bounce threshold (JSON);
 * `bounce_counts` the transient bounces in a row per tenant and address.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export const consentMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const t = columnTypes(dialect);
    await t
      .table(db.schema.createTable('suppressions'))
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('channel', 'varchar(16)', (c) => c.notNull())
      .addColumn('recipient', t.shortText, (c) => c.notNull())
      .addColumn('category', 'varchar(64)', (c) => c.notNull())
      .addColumn('source', 'varchar(16)', (c) => c.notNull())
      .addColumn('reason', t.shortText)
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('suppressions_pk', ['tenant_id', 'channel', 'recipient', 'category'])
      .execute();
    await t
      .table(db.schema.createTable('consent_records'))
      .addColumn('id', t.id, (c) => c.primaryKey())
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('channel', 'varchar(16)', (c) => c.notNull())
      .addColumn('recipient', t.shortText, (c) => c.notNull())
      .addColumn('category', 'varchar(64)', (c) => c.notNull())
      .addColumn('action', 'varchar(16)', (c) => c.notNull())
      .addColumn('source', 'varchar(16)', (c) => c.notNull())
      .addColumn('reason', t.shortText)
      .addColumn('evidence', t.longText)
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('consent_records_recipient')
      .on('consent_records')
      .columns(['tenant_id', 'channel', 'recipient', 'id'])
      .execute();
    await t
      .table(db.schema.createTable('consent_policies'))
      .addColumn('tenant_id', t.id, (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
      .addColumn('spec', t.longText, (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await t
      .table(db.schema.createTable('bounce_counts'))
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('recipient', t.shortText, (c) => c.notNull())
      .addColumn('transient', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('bounce_counts_pk', ['tenant_id', 'recipient'])
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.dropTable('bounce_counts').execute();
    await db.schema.dropTable('consent_policies').execute();
    await db.schema.dropTable('consent_records').execute();
    await db.schema.dropTable('suppressions').execute();
  },
});

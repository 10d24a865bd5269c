/**
 * 0011: SMS pumping protection's tables: a tenant's fraud policy per channel, the estimated price
 * of a message per channel, and each tenant's estimated SMS spend per calendar month (UTC), kept
 * in SQL because it is money: a flushed Redis or a restart must not give a month's cap back.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export const smsFraudMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const t = columnTypes(dialect);
    await t
      .table(db.schema.createTable('fraud_policies'))
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('channel', 'varchar(16)', (c) => c.notNull())
      .addColumn('spec', t.longText, (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('fraud_policies_pk', ['tenant_id', 'channel'])
      .execute();
    await t
      .table(db.schema.createTable('prices'))
      .addColumn('channel', 'varchar(16)', (c) => c.primaryKey())
      .addColumn('spec', t.longText, (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await t
      .table(db.schema.createTable('sms_spend'))
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('month', 'varchar(7)', (c) => c.notNull())
      .addColumn('spent_micros', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('sms_spend_pk', ['tenant_id', 'month'])
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.dropTable('sms_spend').execute();
    await db.schema.dropTable('prices').execute();
    await db.schema.dropTable('fraud_policies').execute();
  },
});

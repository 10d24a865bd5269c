/**
 * 0007: message templates (one row per version), quiet hours per tenant channel, and a message's
 * priority, with an index the claim reads transactional messages through before bulk ones (a
 * campaign's backlog must not sit in front of an OTP). Existing messages are transactional.
 */
import type { Kysely, Migration } from 'kysely';
import { DIALECT_CAPABILITIES, type Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export const templatesPriorityQuietHoursMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const t = columnTypes(dialect);
    await t
      .table(db.schema.createTable('message_templates'))
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('channel', 'varchar(16)', (c) => c.notNull())
      .addColumn('name', 'varchar(128)', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('spec', t.longText, (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('retired_at', 'bigint')
      .addPrimaryKeyConstraint('message_templates_pk', ['tenant_id', 'channel', 'name', 'version'])
      .execute();
    await t
      .table(db.schema.createTable('quiet_hours'))
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('channel', 'varchar(16)', (c) => c.notNull())
      .addColumn('spec', t.longText, (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('quiet_hours_pk', ['tenant_id', 'channel'])
      .execute();
    // 0 transactional, 1 bulk: claims read lane 0 first.
    await db.schema
      .alterTable('messages')
      .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('messages_channel_status_priority_due')
      .on('messages')
      .columns(['channel', 'status', 'priority', 'due_at'])
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    const drop = db.schema.dropIndex('messages_channel_status_priority_due');
    await (DIALECT_CAPABILITIES[dialect].indexNamedByTable ? drop.on('messages') : drop).execute();
    await db.schema.alterTable('messages').dropColumn('priority').execute();
    await db.schema.dropTable('quiet_hours').execute();
    await db.schema.dropTable('message_templates').execute();
  },
});

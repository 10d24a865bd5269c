/**
 * 0006: tenants' webhook endpoints and the outbox of their events (`webhook_events`), written in
 * the transaction of each message status change so that no crash loses or invents an event; and
 * vendors' delivery receipts: the receipt on the message (looked up by the vendor's id), the
 * providers' receipt tokens, the receipts that arrive before their send is settled.
 */
import type { Kysely, Migration } from 'kysely';
import { DIALECT_CAPABILITIES, type Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export function webhooksMigration(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
    async up(db: Kysely<any>) {
      await t
        .table(db.schema.createTable('webhooks'))
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('url', t.longText, (c) => c.notNull())
        .addColumn('events', t.longText, (c) => c.notNull())
        .addColumn('description', t.shortText)
        .addColumn('secret', t.longText, (c) => c.notNull())
        .addColumn('previous_secret', t.longText)
        .addColumn('previous_until', 'bigint')
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // Read in every status change's transaction: which webhooks the tenants of a batch have.
      await db.schema.createIndex('webhooks_tenant').on('webhooks').columns(['tenant_id', 'enabled']).execute();

      await t
        .table(db.schema.createTable('webhook_events'))
        .addColumn('webhook_id', t.id, (c) => c.notNull())
        .addColumn('event_id', t.id, (c) => c.notNull())
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('message_id', t.id, (c) => c.notNull())
        .addColumn('step', 'integer', (c) => c.notNull())
        .addColumn('type', 'varchar(32)', (c) => c.notNull())
        .addColumn('body', t.longText, (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_at', 'bigint', (c) => c.notNull())
        .addColumn('give_up_at', 'bigint', (c) => c.notNull())
        .addColumn('last_error', t.longText)
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_events_pk', ['webhook_id', 'event_id'])
        .execute();
      // The dispatcher's claim: a webhook's due pending events.
      await db.schema.createIndex('webhook_events_due').on('webhook_events').columns(['webhook_id', 'status', 'next_at']).execute();
      // The order check: earlier events of the same message still pending for the same webhook.
      await db.schema.createIndex('webhook_events_message').on('webhook_events').columns(['webhook_id', 'message_id', 'step']).execute();
      // Retention and the list of failed events.
      await db.schema.createIndex('webhook_events_finished').on('webhook_events').columns(['status', 'updated_at']).execute();

      await db.schema.alterTable('messages').addColumn('receipt_status', 'varchar(16)').execute();
      await db.schema.alterTable('messages').addColumn('receipt_code', t.shortText).execute();
      await db.schema.alterTable('messages').addColumn('receipt_at', 'bigint').execute();
      // A receipt names the message by the vendor's id (BizId, SerialNo).
      await db.schema.createIndex('messages_provider_message').on('messages').columns(['provider_message_id', 'provider_id']).execute();
      await t
        .table(db.schema.createTable('receipt_tokens'))
        .addColumn('provider_id', t.id, (c) => c.primaryKey())
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await t
        .table(db.schema.createTable('pending_receipts'))
        .addColumn('provider_id', t.id, (c) => c.notNull())
        .addColumn('provider_message_id', t.shortText, (c) => c.notNull())
        .addColumn('delivered', 'integer', (c) => c.notNull())
        .addColumn('code', t.shortText, (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('pending_receipts_pk', ['provider_message_id', 'provider_id'])
        .execute();
    },

    // biome-ignore lint/suspicious/noExplicitAny: see up().
    async down(db: Kysely<any>) {
      await db.schema.dropTable('pending_receipts').execute();
      await db.schema.dropTable('receipt_tokens').execute();
      const drop = db.schema.dropIndex('messages_provider_message');
      await (DIALECT_CAPABILITIES[dialect].indexNamedByTable ? drop.on('messages') : drop).execute();
      for (const column of ['receipt_at', 'receipt_code', 'receipt_status'])
        await db.schema.alterTable('messages').dropColumn(column).execute();
      await db.schema.dropTable('webhook_events').execute();
      await db.schema.dropTable('webhooks').execute();
    },
  };
}

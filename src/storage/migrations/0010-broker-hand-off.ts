/**
 * 0010: the broker hand-off (docs/operations.md, "Brokers"). `messages.handed_off_at` marks a
 * due message published to the broker, so the due index or the SQL due query does not publish it
 * again while the broker holds it (the sweep publishes it again only once it is older than
 * SLUICE_BROKER_REPUBLISH_AFTER_MS, or older than the broker's store). `bus_events` is the outbox
 * of the status events published on the bus, written in each status change's transaction while
 * the broker is on and deleted once published.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export function brokerHandOffMigration(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('messages').addColumn('handed_off_at', 'bigint').execute();
      await t
        .table(db.schema.createTable('bus_events'))
        .addColumn('event_id', t.id, (c) => c.primaryKey())
        .addColumn('message_id', t.id, (c) => c.notNull())
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('type', 'varchar(32)', (c) => c.notNull())
        .addColumn('body', t.longText, (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },

    // biome-ignore lint/suspicious/noExplicitAny: see up().
    async down(db: Kysely<any>) {
      await db.schema.dropTable('bus_events').execute();
      await db.schema.alterTable('messages').dropColumn('handed_off_at').execute();
    },
  };
}

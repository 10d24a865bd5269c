/**
 * 0001: every table of DESIGN.md §5. Times are epoch-ms BIGINT, booleans INTEGER 0/1, JSON TEXT
 * (see `schema.ts`). Foreign keys guard configuration rows (keys, quotas, rules → tenant;
 * attempts → message). `messages.tenant_id` has none on purpose: it is the hot insert path and
 * tenants are suspended, never deleted.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export function initialMigration(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
    async up(db: Kysely<any>) {
      await t
        .table(db.schema.createTable('tenants'))
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('name', t.shortText, (c) => c.notNull().unique())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('qps_limit', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await t
        .table(db.schema.createTable('api_keys'))
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_tenant').on('api_keys').column('tenant_id').execute();

      await t
        .table(db.schema.createTable('tenant_quotas'))
        .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('channel', 'varchar(16)', (c) => c.notNull())
        .addColumn('daily_limit', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('tenant_quotas_pk', ['tenant_id', 'channel'])
        .execute();

      await t
        .table(db.schema.createTable('rule_sets'))
        .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('channel', 'varchar(16)', (c) => c.notNull())
        .addColumn('rules', t.longText, (c) => c.notNull())
        .addColumn('fallback', t.longText)
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('rule_sets_pk', ['tenant_id', 'channel'])
        .execute();

      await t
        .table(db.schema.createTable('blacklist'))
        .addColumn('scope', t.id, (c) => c.notNull())
        .addColumn('channel', 'varchar(16)', (c) => c.notNull())
        .addColumn('recipient', t.shortText, (c) => c.notNull())
        .addColumn('reason', t.shortText)
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('blacklist_pk', ['scope', 'channel', 'recipient'])
        .execute();

      await t
        .table(db.schema.createTable('providers'))
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('scope', t.id, (c) => c.notNull())
        .addColumn('channel', 'varchar(16)', (c) => c.notNull())
        .addColumn('kind', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', t.shortText, (c) => c.notNull())
        .addColumn('priority', 'integer', (c) => c.notNull())
        .addColumn('qps', 'integer', (c) => c.notNull())
        .addColumn('config', t.longText, (c) => c.notNull())
        .addColumn('secret', t.longText)
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('providers_channel_scope').on('providers').columns(['channel', 'scope']).execute();

      await t
        .table(db.schema.createTable('messages'))
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('channel', 'varchar(16)', (c) => c.notNull())
        .addColumn('recipient', t.shortText, (c) => c.notNull())
        .addColumn('payload', t.longText, (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('provider_id', t.id)
        .addColumn('provider_message_id', t.shortText)
        .addColumn('last_error', t.longText)
        .addColumn('lease_until', 'bigint')
        .addColumn('claim_token', 'varchar(64)')
        .addColumn('idempotency_key', 'varchar(255)')
        .addColumn('request_hash', 'varchar(64)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('sent_at', 'bigint')
        .addUniqueConstraint('messages_tenant_idempotency_unique', ['tenant_id', 'idempotency_key'])
        .execute();
      await db.schema.createIndex('messages_status_due').on('messages').columns(['status', 'due_at']).execute();
      await db.schema.createIndex('messages_channel_status_due').on('messages').columns(['channel', 'status', 'due_at']).execute();

      await t
        .table(db.schema.createTable('delivery_attempts'))
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('message_id', t.id, (c) => c.notNull().references('messages.id').onDelete('cascade'))
        .addColumn('attempt_no', 'integer', (c) => c.notNull())
        .addColumn('provider_id', t.id)
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint', (c) => c.notNull())
        .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
        .addColumn('error', t.longText)
        .addColumn('provider_message_id', t.shortText)
        .execute();
      await db.schema.createIndex('delivery_attempts_message').on('delivery_attempts').columns(['message_id', 'attempt_no']).execute();
    },

    // biome-ignore lint/suspicious/noExplicitAny: see up().
    async down(db: Kysely<any>) {
      for (const table of [
        'delivery_attempts',
        'messages',
        'providers',
        'blacklist',
        'rule_sets',
        'tenant_quotas',
        'api_keys',
        'tenants',
      ]) {
        await db.schema.dropTable(table).ifExists().execute();
      }
    },
  };
}

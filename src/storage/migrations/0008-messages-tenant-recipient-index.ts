/**
 * 0008: an index on `messages(tenant_id, recipient, id)`, for the admin search of a tenant's
 * messages to one recipient, newest first (`GET /v1/admin/tenants/:id/messages?to=`). Ids sort by
 * creation time, so each page is one backward range scan of the index from the cursor, whatever the
 * size of the table; without it the search reads every message of the tenant (at best, through the
 * idempotency key's index; docs/benchmarks.md, "Admin search"). The cost is one more index entry
 * per insert.
 */
import type { Kysely, Migration } from 'kysely';
import { DIALECT_CAPABILITIES, type Dialect } from '../database.js';

export const messagesTenantRecipientIndexMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const create = db.schema.createIndex('messages_tenant_recipient').on('messages').columns(['tenant_id', 'recipient', 'id']);
    // PostgreSQL: an operator may build it beforehand without holding writes (CREATE INDEX
    // CONCURRENTLY). MySQL has no IF NOT EXISTS here; InnoDB builds it online.
    await (dialect === 'mysql' ? create : create.ifNotExists()).execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    const drop = db.schema.dropIndex('messages_tenant_recipient');
    await (DIALECT_CAPABILITIES[dialect].indexNamedByTable ? drop.on('messages') : drop).execute();
  },
});

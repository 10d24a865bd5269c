/**
 * 0009: an index on `messages(tenant_id, id)`, for the admin listing of a tenant's recent messages,
 * newest first (`GET /v1/admin/tenants/:id/messages` without `to`, the console's Messages screen).
 * Ids sort by creation time, so each page is one backward range scan of the index from the cursor;
 * without it a page reads every message of the tenant and sorts them (or the primary key backwards
 * past other tenants' messages; docs/benchmarks.md, "Admin search"). The cost is one more index
 * entry per insert.
 */
import type { Kysely, Migration } from 'kysely';
import { DIALECT_CAPABILITIES, type Dialect } from '../database.js';

export const messagesTenantIndexMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const create = db.schema.createIndex('messages_tenant_id').on('messages').columns(['tenant_id', 'id']);
    // PostgreSQL: an operator may build it beforehand without holding writes (CREATE INDEX
    // CONCURRENTLY). MySQL has no IF NOT EXISTS here; InnoDB builds it online.
    await (dialect === 'mysql' ? create : create.ifNotExists()).execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    const drop = db.schema.dropIndex('messages_tenant_id');
    await (DIALECT_CAPABILITIES[dialect].indexNamedByTable ? drop.on('messages') : drop).execute();
  },
});

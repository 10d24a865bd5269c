/**
 * 0005: `risk_rule_sets`, the risk rules of each (tenant, action) that `POST /v1/risk/check`
 * judges events by; one JSON document per action, replaced whole like channel rule sets.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export const riskRuleSetsMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const t = columnTypes(dialect);
    await t
      .table(db.schema.createTable('risk_rule_sets'))
      .addColumn('tenant_id', t.id, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('action', t.id, (c) => c.notNull())
      .addColumn('rules', t.longText, (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('risk_rule_sets_pk', ['tenant_id', 'action'])
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.dropTable('risk_rule_sets').ifExists().execute();
  },
});

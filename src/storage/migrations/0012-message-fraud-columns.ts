/**
 * 0012: what SMS pumping protection keeps on a message: when the tenant confirmed its code
 * (feedback, counted once), the estimated cost charged to its month (given back once by a
 * cancel), and what monitor mode would have refused (its timeline's line). All NULL on older
 * messages, which were charged nothing.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { columnTypes } from './column-types.js';

export const messageFraudColumnsMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const t = columnTypes(dialect);
    await db.schema.alterTable('messages').addColumn('confirmed_at', 'bigint').execute();
    await db.schema.alterTable('messages').addColumn('cost_micros', 'bigint').execute();
    await db.schema.alterTable('messages').addColumn('fraud_flags', t.longText).execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.alterTable('messages').dropColumn('fraud_flags').execute();
    await db.schema.alterTable('messages').dropColumn('cost_micros').execute();
    await db.schema.alterTable('messages').dropColumn('confirmed_at').execute();
  },
});

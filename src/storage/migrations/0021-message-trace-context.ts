/**
 * 0021: the W3C Trace Context of a message's `send {channel}` span (issue 37), so an attempt made
 * hours later, after retries or a restart, continues the accepting request's trace. `traceparent`
 * is 55 characters; the propagator drops a `tracestate` over 512. NULL on older messages and on
 * every message accepted while no tracing SDK runs.
 */
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../database.js';

export const messageTraceContextMigration = (_dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    await db.schema.alterTable('messages').addColumn('traceparent', 'varchar(64)').execute();
    await db.schema.alterTable('messages').addColumn('tracestate', 'varchar(512)').execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    await db.schema.alterTable('messages').dropColumn('tracestate').execute();
    await db.schema.alterTable('messages').dropColumn('traceparent').execute();
  },
});

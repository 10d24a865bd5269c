/**
 * Inserting new messages: the row of a {@link NewMessageRow}, the multi-row INSERT the batched
 * writer runs for a batch of them, and the duplicate idempotency key told apart from other errors.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import { DuplicateIdempotencyKeyError, isUniqueViolation } from '../../errors.js';
import { newMessageId, shardOf } from '../../ids.js';
import type { MessageRow, Tables } from '../../schema.js';
import type { NewMessageRow } from './types.js';

/** The row of a new message: `scheduled` if due later than `now`, else `queued`. */
export function newMessageRow(input: NewMessageRow): MessageRow {
  const id = input.id ?? newMessageId(input.now);
  const dueAt = input.dueAt ?? input.now;
  return {
    id,
    tenant_id: input.tenantId,
    channel: input.channel,
    recipient: input.recipient,
    payload: JSON.stringify(input.payload),
    status: dueAt > input.now ? 'scheduled' : 'queued',
    due_at: dueAt,
    attempts: 0,
    max_attempts: input.maxAttempts ?? 5,
    shard: shardOf(id),
    provider_id: null,
    provider_message_id: null,
    last_error: null,
    lease_until: null,
    claim_token: null,
    idempotency_key: input.idempotencyKey ?? null,
    request_hash: input.requestHash ?? null,
    created_at: input.now,
    updated_at: input.now,
    sent_at: null,
    priority: input.priority === 'bulk' ? 1 : 0,

    receipt_status: null,
    receipt_code: null,
    receipt_at: null,
    handed_off_at: null,
    confirmed_at: null,
    cost_micros: input.costMicros ?? null,
    fraud_flags: input.fraudFlags?.length ? JSON.stringify(input.fraudFlags) : null,
    traceparent: input.traceparent ?? null,
    tracestate: input.tracestate ?? null,
  };
}

/**
 * The multi-row INSERT of new messages. Its text depends only on the row count (every row has
 * every column), so Kysely builds and compiles it once per count and later batches bind their
 * values to the cached text: building the query was a visible share of the accept path's CPU at
 * thousands of messages per second.
 */
export class MessageInserts {
  private readonly texts = new Map<number, { sql: string; columns: (keyof MessageRow)[] }>();

  async insert(trx: Kysely<Tables>, rows: readonly MessageRow[]): Promise<void> {
    const cached = this.texts.get(rows.length);
    if (!cached) {
      const compiled = trx.insertInto('messages').values(rows).compile();
      if (this.texts.size < 1024)
        this.texts.set(rows.length, { sql: compiled.sql, columns: Object.keys(rows[0]!) as (keyof MessageRow)[] });
      await trx.executeQuery(compiled);
      return;
    }
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of cached.columns) parameters.push(row[column]);
    await trx.executeQuery(CompiledQuery.raw(cached.sql, parameters));
  }
}

/** A constraint message names the index or columns; both spellings contain this. */
const IDEMPOTENCY_CONSTRAINT = /messages_tenant_idempotency_unique|messages\.idempotency_key/;

/** `error` as a {@link DuplicateIdempotencyKeyError} when inserting `row` broke its tenant's key's uniqueness; else as is. */
export function insertError(row: MessageRow, error: unknown): unknown {
  if (row.idempotency_key !== null && isUniqueViolation(error) && IDEMPOTENCY_CONSTRAINT.test(String((error as Error).message)))
    return new DuplicateIdempotencyKeyError(row.tenant_id, row.idempotency_key, error);
  return error;
}

/**
 * The messages repository's public types and its row mappers (snake_case rows ⇄ camelCase
 * values). Timestamps are epoch ms; BIGINT columns arrive as numbers on every dialect.
 */
import type { Channel } from '../../../core/channels.js';
import { newId } from '../../ids.js';
import type { AttemptOutcome, DeliveryAttemptsTable, MessagePayload, MessageRow, MessageStatus } from '../../schema.js';

export interface Message {
  id: string;
  tenantId: string;
  channel: Channel;
  recipient: string;
  payload: MessagePayload;
  status: MessageStatus;
  /** When it may be sent (epoch ms); after a retry, when the next attempt is due. */
  dueAt: number;
  /** Claims so far; while `sending`, the fencing token of the current claim. */
  attempts: number;
  maxAttempts: number;
  /** 0..1023; partition p of P owns `shard % P == p`. */
  shard: number;
  providerId: string | null;
  providerMessageId: string | null;
  lastError: string | null;
  /** While `sending`: when the claim expires. */
  leaseUntil: number | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  createdAt: number;
  updatedAt: number;
  sentAt: number | null;
  priority: 'transactional' | 'bulk';

  /** The vendor's delivery receipt, once one arrived (SMS providers that push them). */
  receipt: MessageReceipt | null;
  /** Broker mode: when it was last published to the broker (a retry waiting there too); null: not handed off. */
  handedOffAt: number | null;
  /** When the tenant reported the message's code used (feedback); null: not confirmed. */
  confirmedAt: number | null;
  /** The estimated cost charged to the tenant's month, in millionths; null: none (or given back by a cancel). */
  costMicros: number | null;
  /** What SMS pumping protection in monitor mode would have refused; empty: nothing. */
  fraudFlags: StoredFraudFlag[];
  /** The context of its `send {channel}` span (W3C Trace Context, 0021); null: accepted untraced. */
  traceparent: string | null;
  tracestate: string | null;
}

/** One line SMS pumping protection left on a message (admission/fraud-policy.ts `FraudFlag`, stored as JSON). */
export interface StoredFraudFlag {
  rule: string;
  code: string;
  message: string;
}

/** A vendor's delivery receipt as stored: its verdict, the vendor's own code, when. */
export interface MessageReceipt {
  status: 'delivered' | 'undelivered';
  code: string;
  at: number;
}

export interface NewMessageRow {
  /** Default: a new `newMessageId(now)`. */
  id?: string;
  tenantId: string;
  channel: Channel;
  /** Normalised recipient. */
  recipient: string;
  payload: MessagePayload;
  /** Acceptance time (epoch ms). */
  now: number;
  /** When to send; default `now`. Later than `now` → status `scheduled`, else `queued`. */
  dueAt?: number;
  /** Claims allowed before the message fails; default 5. */
  maxAttempts?: number;
  idempotencyKey?: string | null;
  /** Hash of the request body, compared when the idempotency key is replayed. */
  requestHash?: string | null;
  /** Default `transactional`; `bulk` messages are claimed after due transactional ones. */
  priority?: 'transactional' | 'bulk';
  /** The estimated cost SMS pumping protection charged to the tenant's month. */
  costMicros?: number | null;
  fraudFlags?: StoredFraudFlag[] | null;
  /** The accepting trace's context (docs/operations.md, "Tracing"). */
  traceparent?: string | null;
  tracestate?: string | null;
}

export interface DeliveryAttempt {
  id: string;
  messageId: string;
  attemptNo: number;
  providerId: string | null;
  startedAt: number;
  finishedAt: number;
  outcome: AttemptOutcome;
  error: string | null;
  providerMessageId: string | null;
}

export type NewDeliveryAttempt = Omit<DeliveryAttempt, 'id' | 'error' | 'providerMessageId' | 'providerId'> & {
  providerId?: string | null;
  error?: string | null;
  providerMessageId?: string | null;
};

/** A claim's parameters. */
export interface ClaimOptions {
  now: number;
  /** How long the claim holds before another worker may take the message. */
  leaseMs: number;
  /** Provider chosen already, if any (also settable by `markSent`). */
  providerId?: string | null;
}

/** Which slice of the queue a dispatcher serves: `channel`, and shards with `shard % partitions == partition`. */
export interface PartitionSelector {
  channel: Channel;
  /** 0 ≤ partition < partitions. */
  partition: number;
  /** 1..1024; 1 = the whole channel. */
  partitions: number;
}

/** Common fields of the guarded moves out of `sending`. */
export interface SettleOptions {
  /** The `attempts` value returned by the claim (fencing token). */
  attempt: number;
  now: number;
  /** Also insert this attempt row, in the same transaction, if (and only if) the move happens. */
  record?: Omit<NewDeliveryAttempt, 'messageId'>;
}

/** A claim still held: its message and the fencing token the claim returned. */
export interface HeldClaim {
  id: string;
  attempt: number;
}

export type CancelResult = 'canceled' | 'not-found' | 'too-late';

/** One row of `MessagesRepository.countOpen`. */
export interface StatusCount {
  channel: Channel;
  status: MessageStatus;
  count: number;
}

/** Waiting to be claimed: due now or at a later time. */
export const PENDING_STATUSES: readonly MessageStatus[] = ['queued', 'scheduled'];
/** Not finished: pending or being sent. */
export const OPEN_STATUSES: readonly MessageStatus[] = ['queued', 'scheduled', 'sending'];
/** Handed to a provider: the only messages whose code a user can have received, so the only ones feedback may confirm. */
export const HANDED_STATUSES: readonly MessageStatus[] = ['sent', 'delivered', 'undelivered'];
/** Final: no move leaves these. */
export const FINISHED_STATUSES: readonly MessageStatus[] = ['sent', 'failed', 'canceled', 'delivered', 'undelivered', 'suppressed'];

const nullableNumber = (value: number | null) => (value === null ? null : Number(value));

/** `payload`: when the caller has it already (a row just inserted), so it is not parsed back. */
export function toMessage(row: MessageRow, payload?: MessagePayload): Message {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    channel: row.channel,
    recipient: row.recipient,
    payload: payload ?? (JSON.parse(row.payload) as MessagePayload),
    status: row.status,
    dueAt: Number(row.due_at),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    shard: Number(row.shard),
    providerId: row.provider_id,
    providerMessageId: row.provider_message_id,
    lastError: row.last_error,
    leaseUntil: nullableNumber(row.lease_until),
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    sentAt: nullableNumber(row.sent_at),
    priority: Number(row.priority) === 1 ? 'bulk' : 'transactional',

    receipt:
      row.receipt_status === null
        ? null
        : { status: row.receipt_status as MessageReceipt['status'], code: row.receipt_code ?? '', at: Number(row.receipt_at) },
    handedOffAt: nullableNumber(row.handed_off_at ?? null),
    confirmedAt: nullableNumber(row.confirmed_at),
    costMicros: nullableNumber(row.cost_micros),
    fraudFlags: row.fraud_flags === null ? [] : (JSON.parse(row.fraud_flags) as StoredFraudFlag[]),
    traceparent: row.traceparent ?? null,
    tracestate: row.tracestate ?? null,
  };
}

export function toAttempt(row: DeliveryAttemptsTable): DeliveryAttempt {
  return {
    id: row.id,
    messageId: row.message_id,
    attemptNo: Number(row.attempt_no),
    providerId: row.provider_id,
    startedAt: Number(row.started_at),
    finishedAt: Number(row.finished_at),
    outcome: row.outcome,
    error: row.error,
    providerMessageId: row.provider_message_id,
  };
}

/** `messageId` apart from `input`, so a settle's record needs no `{ ...record, messageId }` copy per row. */
export function attemptRow(input: Omit<NewDeliveryAttempt, 'messageId'>, messageId: string): DeliveryAttemptsTable {
  return {
    id: newId(input.startedAt),
    message_id: messageId,
    attempt_no: input.attemptNo,
    provider_id: input.providerId ?? null,
    started_at: input.startedAt,
    finished_at: input.finishedAt,
    outcome: input.outcome,
    error: input.error ?? null,
    provider_message_id: input.providerMessageId ?? null,
  };
}

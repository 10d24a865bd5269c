/**
 * A due job's wire form, shared by every adapter: a small JSON object of identifiers, with a
 * version so a later build can add fields and still read what an older one published.
 */
import { type Channel, isChannel } from '../core/channels.js';
import type { DueJob } from './port.js';

/** The version this build writes; it reads this one and ignores fields it does not know. */
const VERSION = 1;

/** The broker's de-duplication id of a job: one per hand-off (message, attempt, hand-off time). */
export const dedupIdOf = (job: Pick<DueJob, 'messageId' | 'attempt' | 'handedOffAt'>): string =>
  `${job.messageId}:${job.attempt}:${job.handedOffAt}`;

export function encodeDueJob(job: DueJob): string {
  return JSON.stringify({
    v: VERSION,
    messageId: job.messageId,
    tenantId: job.tenantId,
    channel: job.channel,
    partition: job.partition,
    attempt: job.attempt,
    dueAt: job.dueAt,
    handedOffAt: job.handedOffAt,
    priority: job.priority,
  });
}

/** A problem with a job about to be published (a caller's bug), or undefined. */
export function dueJobProblem(job: DueJob): string | undefined {
  if (!isChannel(job.channel)) return `unknown channel ${JSON.stringify(job.channel)}`;
  if (!Number.isSafeInteger(job.partition) || job.partition < 0) return `partition must be an integer ≥ 0 (got ${job.partition})`;
  if (!Number.isSafeInteger(job.attempt) || job.attempt < 0) return `attempt must be an integer ≥ 0 (got ${job.attempt})`;
  if (!Number.isFinite(job.dueAt)) return 'dueAt must be a time in epoch ms';
  if (!Number.isSafeInteger(job.handedOffAt)) return 'handedOffAt must be a time in epoch ms';
  for (const [name, id] of [
    ['messageId', job.messageId],
    ['tenantId', job.tenantId],
  ] as const) {
    if (typeof id !== 'string' || !SAFE_ID.test(id)) return `${name} must be 1 to 128 of A-Z a-z 0-9 _ -`;
  }
  return undefined;
}

/** Ids sluice makes (ULID-like, `evt_…`): safe in a subject token and a header. */
export const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The job in `payload`, which arrived on `channel`'s consumer, or the reason it is none (another
 * publisher's message, a job of another channel, a newer version without a field we need).
 */
export function decodeDueJob(payload: string, channel: Channel): DueJob | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return { problem: 'payload is not JSON' };
  }
  if (value === null || typeof value !== 'object') return { problem: 'payload is not an object' };
  const fields = value as Record<string, unknown>;
  if (typeof fields.v !== 'number' || fields.v < VERSION) return { problem: `unknown version ${JSON.stringify(fields.v)}` };
  const job = {
    messageId: fields.messageId,
    tenantId: fields.tenantId,
    channel: fields.channel,
    partition: fields.partition,
    attempt: fields.attempt,
    dueAt: fields.dueAt,
    handedOffAt: fields.handedOffAt,
    // Absent in a job of an earlier build: its lane is read from SQL when it is claimed anyway.
    priority: fields.priority === 'bulk' ? 'bulk' : 'transactional',
  } as DueJob;
  const problem = dueJobProblem(job);
  if (problem) return { problem };
  if (job.channel !== channel) return { problem: `a ${job.channel} job on the ${channel} consumer` };
  return job;
}

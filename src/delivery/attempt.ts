/**
 * One attempt of one claimed message: the provider it goes to (failover in priority order), its
 * pace, the send, and how it settles: `sent`, back to `scheduled` for a retry, or `failed`.
 */
import { ATTR, annotate, contextFromStored, errorTypeOf, inSpan, messageAttributes, SpanKind } from '../core/tracing.js';
import type { Clock } from '../limiter/index.js';
import { isProviderError, type OutboundMessage, type Provider } from '../providers/provider.js';
import type { Message, NewDeliveryAttempt } from '../storage/repositories/messages.js';
import type { DeliveryMessages, DeliveryMetrics, SendGate } from './ports.js';
import type { ProviderDirectory } from './provider-directory.js';

/** Full-jitter exponential backoff: uniform in [0, min(max, base·2^(attempt−1))]. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.max(1, Math.round(ceiling * random()));
}

/** What an attempt uses; one per dispatcher (or per channel's broker consumer). */
export interface AttemptContext extends SendGate {
  messages: Pick<DeliveryMessages, 'markSent' | 'markRetry' | 'markFailed' | 'markSuppressed' | 'release'>;
  providers: ProviderDirectory;
  clock: Clock;
  metrics?: Pick<DeliveryMetrics, 'providerDuration' | 'queueWait' | 'sends' | 'retries'>;
  retryBaseMs: number;
  retryMaxMs: number;
  random: () => number;
  /**
   * A message moved back to pending goes back through the due index, due at `dueAt` (a retry, or
   * a claim given back at shutdown), and its dispatcher ticks by then. Rejects if the index
   * cannot take it (its next rebuild from SQL finds it).
   */
  requeue(message: Message, dueAt: number): Promise<void>;
  /**
   * Broker mode: whether a retry after `delayMs` waits in the broker (its job nak'ed with the
   * delay: the row is marked handed off) rather than in the due index ({@link requeue}). A claim
   * given back at shutdown stays the broker's too (the caller naks it). Absent: no broker.
   */
  retryInBroker?(delayMs: number): boolean;
}

/** What one attempt came to; the broker consumer settles its delivery by it. */
export type AttemptOutcome =
  /** `sent`, or `failed` (a permanent error, the attempts used up, or `deliveryLimit`: the broker's). */
  | { kind: 'sent' }
  | { kind: 'failed'; deliveryLimit?: boolean }
  /** Back to `scheduled` for `dueAt`; `inBroker`: its job waits in the broker (nak with the delay). */
  | { kind: 'retry'; dueAt: number; delayMs: number; inBroker: boolean }
  /** The recipient was suppressed after acceptance: `suppressed`, nothing sent. */
  | { kind: 'suppressed' }
  /** The pace wait was cut short by a shutdown: back to `queued`, nothing sent. */
  | { kind: 'released' }
  /** The claim was no longer this worker's (its lease expired and another took it): nothing written. */
  | { kind: 'stale' };

/** What one attempt is told beside its message. */
export interface AttemptOptions {
  /**
   * The broker makes no further delivery of this message's job: a failure that would be retried
   * fails the message instead, with `broker delivery limit reached` before the error.
   */
  lastDelivery?: boolean;
}

/** The error of a message failed because its broker job reached the delivery limit. */
export const DELIVERY_LIMIT_ERROR = 'broker delivery limit reached';

type AttemptRecord = (
  outcome: 'sent' | 'retryable' | 'permanent',
  error?: string,
  providerMessageId?: string,
) => Omit<NewDeliveryAttempt, 'messageId'>;

const settled = (moved: boolean, outcome: AttemptOutcome): AttemptOutcome => (moved ? outcome : { kind: 'stale' });

/**
 * Sends `message` (claimed, its attempt counted) once and settles it. `stopping` cuts the pace wait
 * short: the message then goes back to the queue, its attempt given back, since nothing was sent.
 *
 * Traced as `process {channel}`, a child of the message's stored `send` context: each attempt is
 * its own span beside the others (a message retried for a day is not one endless span), with the
 * vendor's call (`{kind} send`, a client span) inside it.
 */
export function runAttempt(
  message: Message,
  context: AttemptContext,
  stopping: AbortSignal,
  options: AttemptOptions = {},
): Promise<AttemptOutcome> {
  return inSpan(
    `process ${message.channel}`,
    {
      kind: SpanKind.CONSUMER,
      parent: contextFromStored(message),
      attributes: {
        ...messageAttributes('process', message.channel, message.id),
        [ATTR.tenant]: message.tenantId,
        [ATTR.attempt]: message.attempts,
      },
    },
    async (span) => {
      const outcome = await attemptOnce(message, context, stopping, options);
      if (span.isRecording()) {
        span.setAttribute(ATTR.outcome, outcome.kind);
        if (outcome.kind === 'retry') span.setAttribute(ATTR.retryDelayMs, outcome.delayMs);
      }
      return outcome;
    },
  );
}

async function attemptOnce(
  message: Message,
  context: AttemptContext,
  stopping: AbortSignal,
  options: AttemptOptions,
): Promise<AttemptOutcome> {
  const { messages, providers, metrics, clock } = context;
  const attempt = message.attempts;
  const startedAt = clock.now();
  const candidates = await providers.providersFor(message.tenantId, message.channel);
  const provider = candidates[(attempt - 1) % candidates.length];
  const settle = { attempt, now: 0 };
  if (provider) annotate({ [ATTR.provider]: provider.id, [ATTR.providerKind]: provider.kind });
  if (!provider) {
    const error = `no provider configured for ${message.channel}`;
    return settled(await messages.markFailed(message.id, { ...settle, now: clock.now(), error }), { kind: 'failed' });
  }
  try {
    await providers.pace(provider, message, stopping);
  } catch (error) {
    if (!stopping.aborted) throw error;
    const now = clock.now();
    if (!(await messages.release(message.id, { attempt, now }))) return { kind: 'stale' };
    // Back in the due index (or the broker: the caller naks); the partition's next holder also finds it by its rebuild.
    if (!context.retryInBroker) await context.requeue(message, now).catch(() => undefined);
    return { kind: 'released' };
  }
  // The last look before the provider: at most the sends already handed over leave after a STOP.
  const suppressed = await context.suppressed?.(message);
  if (suppressed !== undefined) {
    const moved = await messages.markSuppressed(message.id, { attempt, now: clock.now(), error: suppressed });
    return settled(moved, { kind: 'suppressed' });
  }
  const outbound: OutboundMessage = {
    id: message.id,
    tenantId: message.tenantId,
    channel: message.channel,
    to: message.recipient,
    ...(message.payload as Omit<OutboundMessage, 'id' | 'tenantId' | 'channel' | 'to'>),
  };
  const record: AttemptRecord = (outcome, error, providerMessageId) => ({
    attemptNo: attempt,
    providerId: provider.id,
    startedAt,
    finishedAt: clock.now(),
    outcome,
    error: error ?? null,
    providerMessageId: providerMessageId ?? null,
  });
  const label = { provider: provider.name ?? provider.id };
  // The vendor's time alone, whatever the outcome (the attempt's own start includes the pace wait).
  const requestStarted = clock.now();
  metrics?.queueWait.observe({ channel: message.channel, lane: message.priority }, Math.max(0, requestStarted - message.dueAt) / 1000);
  const requestTime = () => metrics?.providerDuration.observe(label, (clock.now() - requestStarted) / 1000);
  let result: Awaited<ReturnType<Provider['send']>>;
  try {
    result = await inSpan(
      `${provider.kind} send`,
      { kind: SpanKind.CLIENT, attributes: { [ATTR.provider]: provider.id, [ATTR.providerKind]: provider.kind } },
      () => provider.send(outbound),
    );
  } catch (error) {
    requestTime();
    annotate({ [ATTR.errorType]: errorTypeOf(error) });
    return settleFailure(message, error, { label, providers: candidates.length }, record, context, options);
  }
  // Outside the try: a failure to record the outcome is not the vendor's, and must not count as one.
  requestTime();
  metrics?.sends.inc({ ...label, outcome: 'sent' });
  const moved = await messages.markSent(message.id, {
    attempt,
    now: clock.now(),
    providerId: provider.id,
    providerMessageId: result.providerMessageId,
    record: record('sent', undefined, result.providerMessageId),
  });
  return settled(moved, { kind: 'sent' });
}

/**
 * A failed send, while attempts remain: a retryable failure goes to the next provider in
 * priority order after the backoff (or the vendor's `Retry-After`): a network outage may be
 * ours and hit every provider alike, so each attempt waits. A failure of the provider itself
 * (`providerFault`: credentials, account, address) goes to a provider this round has not tried
 * at once, since waiting cannot cure it; with none left in the round it is final. Anything else,
 * no attempt left, or the broker's last delivery: `failed`. A retry waits in the broker when
 * `retryInBroker` says so, else in the due index.
 */
async function settleFailure(
  message: Message,
  error: unknown,
  failed: { label: { provider: string }; providers: number },
  record: AttemptRecord,
  context: AttemptContext,
  options: AttemptOptions,
): Promise<AttemptOutcome> {
  const { messages, metrics, clock } = context;
  const attempt = message.attempts;
  const retryable = isProviderError(error) ? error.retryable : true;
  const text = error instanceof Error ? error.message : String(error);
  metrics?.sends.inc({ ...failed.label, outcome: retryable ? 'retryable' : 'permanent' });
  const now = clock.now();
  // Attempt n went to provider (n - 1) mod count: attempt n + 1 goes to an untried one unless n wraps.
  const untriedNext = failed.providers > 1 && attempt % failed.providers !== 0;
  const providerFault = !retryable && isProviderError(error) && error.providerFault;
  const movesOn = retryable || (providerFault && untriedNext);
  // The attempt row says what this provider answered, even when the message moves on.
  const attemptRow = record(retryable ? 'retryable' : 'permanent', text);
  const retries = movesOn && attempt < message.maxAttempts;
  if (retries && !options.lastDelivery) {
    const hinted = isProviderError(error) ? (error.retryAfterMs ?? 0) : 0;
    const dueAt = providerFault
      ? now
      : now + Math.max(hinted, retryDelayMs(attempt, context.retryBaseMs, context.retryMaxMs, context.random));
    const delayMs = dueAt - now;
    const inBroker = context.retryInBroker?.(delayMs) ?? false;
    metrics?.retries.inc({ channel: message.channel });
    const moved = await messages.markRetry(message.id, {
      attempt,
      now,
      dueAt,
      error: text,
      record: attemptRow,
      ...(context.retryInBroker ? { handedOffAt: inBroker ? now : null } : {}),
    });
    if (!moved) return { kind: 'stale' };
    if (!inBroker) await context.requeue(message, dueAt);
    return { kind: 'retry', dueAt, delayMs, inBroker };
  }
  const reason = retries ? `${DELIVERY_LIMIT_ERROR}: ${text}` : text;
  const moved = await messages.markFailed(message.id, { attempt, now, error: reason, record: attemptRow });
  return settled(moved, { kind: 'failed', ...(retries ? { deliveryLimit: true } : {}) });
}

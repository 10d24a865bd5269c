/**
 * One attempt of one claimed message: the provider it goes to (failover in priority order), its
 * pace, the send, and how it settles: `sent`, back to `scheduled` for a retry, or `failed`.
 */
import type { Clock } from '../limiter/index.js';
import { isProviderError, type OutboundMessage, type Provider } from '../providers/provider.js';
import type { Message, NewDeliveryAttempt } from '../storage/repositories/messages.js';
import type { DueIndex } from './due-index/index.js';
import type { DeliveryMessages, DeliveryMetrics } from './ports.js';
import type { ProviderDirectory } from './provider-directory.js';

/** Full-jitter exponential backoff: uniform in [0, min(max, base·2^(attempt−1))]. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.max(1, Math.round(ceiling * random()));
}

/** What an attempt uses; one per dispatcher. */
export interface AttemptContext {
  /** The partition's name (`sms:0`): a retried or given-back message re-enters its due index there. */
  partition: string;
  messages: Pick<DeliveryMessages, 'markSent' | 'markRetry' | 'markFailed' | 'release'>;
  providers: ProviderDirectory;
  dueIndex?: DueIndex;
  clock: Clock;
  metrics?: Pick<DeliveryMetrics, 'providerDuration' | 'sends' | 'retries'>;
  retryBaseMs: number;
  retryMaxMs: number;
  random: () => number;
  /** A retry is due at `dueAt`: the dispatcher ticks by then. */
  onRetry(dueAt: number): void;
}

type AttemptRecord = (
  outcome: 'sent' | 'retryable' | 'permanent',
  error?: string,
  providerMessageId?: string,
) => Omit<NewDeliveryAttempt, 'messageId'>;

/**
 * Sends `message` (claimed, its attempt counted) once and settles it. `stopping` cuts the pace wait
 * short: the message then goes back to the queue, its attempt given back, since nothing was sent.
 */
export async function runAttempt(message: Message, context: AttemptContext, stopping: AbortSignal): Promise<void> {
  const { messages, providers, metrics, clock } = context;
  const attempt = message.attempts;
  const startedAt = clock.now();
  const candidates = await providers.providersFor(message.tenantId, message.channel);
  const provider = candidates[(attempt - 1) % candidates.length];
  const settle = { attempt, now: 0 };
  if (!provider) {
    await messages.markFailed(message.id, { ...settle, now: clock.now(), error: `no provider configured for ${message.channel}` });
    return;
  }
  try {
    await providers.pace(provider, message.priority, stopping);
  } catch (error) {
    if (!stopping.aborted) throw error;
    // Back in the due index too; the partition's next holder also finds it by its rebuild.
    const now = clock.now();
    if (await messages.release(message.id, { attempt, now }))
      await context.dueIndex
        ?.addMany(context.partition, [{ id: message.id, dueAt: now, priority: message.priority }])
        .catch(() => undefined);
    return;
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
  const requestTime = () => metrics?.providerDuration.observe(label, (clock.now() - requestStarted) / 1000);
  let result: Awaited<ReturnType<Provider['send']>>;
  try {
    result = await provider.send(outbound);
  } catch (error) {
    requestTime();
    await settleFailure(message, error, { label, providers: candidates.length }, record, context);
    return;
  }
  // Outside the try: a failure to record the outcome is not the vendor's, and must not count as one.
  requestTime();
  metrics?.sends.inc({ ...label, outcome: 'sent' });
  await messages.markSent(message.id, {
    attempt,
    now: clock.now(),
    providerId: provider.id,
    providerMessageId: result.providerMessageId,
    record: record('sent', undefined, result.providerMessageId),
  });
}

/**
 * A failed send, while attempts remain: a retryable failure goes to the next provider in
 * priority order after the backoff (or the vendor's `Retry-After`): a network outage may be
 * ours and hit every provider alike, so each attempt waits. A failure of the provider itself
 * (`providerFault`: credentials, account, address) goes to a provider this round has not tried
 * at once, since waiting cannot cure it; with none left in the round it is final. Anything else,
 * or no attempt left: `failed`.
 */
async function settleFailure(
  message: Message,
  error: unknown,
  failed: { label: { provider: string }; providers: number },
  record: AttemptRecord,
  context: AttemptContext,
): Promise<void> {
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
  if (movesOn && attempt < message.maxAttempts) {
    const hinted = isProviderError(error) ? (error.retryAfterMs ?? 0) : 0;
    const dueAt = providerFault
      ? now
      : now + Math.max(hinted, retryDelayMs(attempt, context.retryBaseMs, context.retryMaxMs, context.random));
    metrics?.retries.inc({ channel: message.channel });
    const moved = await messages.markRetry(message.id, { attempt, now, dueAt, error: text, record: attemptRow });
    if (moved) {
      await context.dueIndex?.addMany(context.partition, [{ id: message.id, dueAt, priority: message.priority }]);
      context.onRetry(dueAt);
    }
  } else {
    await messages.markFailed(message.id, { attempt, now, error: text, record: attemptRow });
  }
}

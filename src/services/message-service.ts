/** Sending (through the admission chain), reading and cancelling messages for a tenant. */
import { createHash } from 'node:crypto';
import type { AdmissionChain } from '../admission/chain.js';
import type { AdmissionContext, SendRequest } from '../admission/context.js';
import { RenderBudget } from '../admission/render-budget.js';
import { SluiceError, unavailableUnlessSluiceError } from '../core/errors.js';
import type { Clock } from '../limiter/index.js';
import { newMessageId } from '../storage/ids.js';
import type { Message, MessagesRepository } from '../storage/repositories/messages.js';
import type { BatchResult, MessageService, MessageView } from './contracts.js';
import type { FeedbackView } from './views.js';

/** Stable over key order, so `{a, b}` and `{b, a}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const requestHashOf = (request: SendRequest): string => createHash('sha256').update(canonicalJson(request)).digest('base64url');

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export class AdmittingMessageService implements MessageService {
  constructor(
    readonly chain: AdmissionChain,
    private readonly messages: MessagesRepository,
    private readonly clock: Clock,
    /**
     * Told each canceled message after the cancel committed (gives its frequency slot back). It
     * must not reject: its failure is its own to log, never the cancel's.
     */
    private readonly canceled?: (tenantId: string, id: string) => Promise<void>,
    /** Most bytes a batch's rendered texts may take together (SLUICE_BATCH_RENDER_LIMIT_BYTES). */
    private readonly batchRenderLimitBytes = 16_777_216,
    /**
     * Told each message the first time its tenant confirms it (counts its conversion). Like
     * `canceled`, it must not reject: the confirmation is stored whatever it does.
     */
    private readonly confirmed?: (message: Message) => Promise<void>,
  ) {}

  send(apiKey: string | undefined, request: SendRequest, idempotencyKey?: string) {
    return this.admit(apiKey, request, idempotencyKey, undefined);
  }

  /** One message through the chain; in a batch, with the batch's render budget. */
  private async admit(
    apiKey: string | undefined,
    request: SendRequest,
    idempotencyKey: string | undefined,
    renderBudget: RenderBudget | undefined,
  ) {
    const now = this.clock.now();
    const context: AdmissionContext = {
      id: newMessageId(now),
      now,
      apiKey,
      idempotencyKey,
      // Only an Idempotency-Key needs the hash: no canonicalising and hashing on the common path.
      requestHash: idempotencyKey === undefined ? undefined : requestHashOf(request),
      request,
      renderBudget,
    };
    await this.chain.admit(context).catch(unavailableUnlessSluiceError);
    if (!context.outcome) throw new Error('admission chain ended without an outcome: the persist step is missing');
    const message = context.message;
    // The due time is said for a message this request scheduled (a replay answers as stored).
    if (context.outcome.replayed || !message?.scheduled) return context.outcome;
    return {
      ...context.outcome,
      dueAt: new Date(message.dueAt).toISOString(),
      ...(message.deferredBy ? { deferredBy: message.deferredBy } : {}),
    };
  }

  /**
   * Each message through the chain on its own, all at once: their limiter calls of one
   * event-loop turn go to Redis as one batched script call per slot, and their inserts share the
   * group commit, so a batch costs far less than its messages sent one by one. Results are in
   * request order; a refused message is an `error` entry, never the batch's failure. Under an
   * Idempotency-Key, message `i` carries `<key>#<i>`, so a replayed batch answers the same ids.
   * The messages' rendered texts share one RenderBudget: past it, a message is refused with 413.
   */
  async sendBatch(
    apiKey: string | undefined,
    requests: readonly (SendRequest | SluiceError)[],
    idempotencyKey?: string,
  ): Promise<BatchResult[]> {
    const renderBudget = new RenderBudget(this.batchRenderLimitBytes);
    return Promise.all(
      requests.map(async (request, index): Promise<BatchResult> => {
        if (request instanceof SluiceError) return { index, error: request.toBody().error as BatchResult['error'] };
        try {
          const outcome = await this.admit(
            apiKey,
            { ...request, priority: request.priority ?? 'bulk' },
            idempotencyKey && `${idempotencyKey}#${index}`,
            renderBudget,
          );
          return { index, ...outcome };
        } catch (error) {
          if (!(error instanceof SluiceError)) throw error;
          // The single send's error body, retryAfterSeconds (its Retry-After) included.
          return { index, error: error.toBody().error as BatchResult['error'] };
        }
      }),
    );
  }

  async get(tenantId: string, id: string): Promise<MessageView | undefined> {
    const message = await this.messages.findById(tenantId, id).catch(unavailableUnlessSluiceError);
    if (!message) return undefined;
    const attempts = await this.messages.listAttempts(id).catch(unavailableUnlessSluiceError);
    return messageView(message, attempts);
  }

  async cancel(tenantId: string, id: string) {
    const result = await this.messages.cancel(tenantId, id, this.clock.now()).catch(unavailableUnlessSluiceError);
    // Also for a repeated cancel: the slot's undo is by message id, a no-op the second time.
    if (result === 'canceled') await this.canceled?.(tenantId, id);
    return result;
  }

  async feedback(tenantId: string, id: string, outcome: 'confirmed'): Promise<FeedbackView | undefined> {
    const found = await this.messages.confirm(tenantId, id, this.clock.now()).catch(unavailableUnlessSluiceError);
    if (!found) return undefined;
    const { message } = found;
    if (message.confirmedAt === null) {
      throw new SluiceError('CONFLICT', `the message is ${message.status}: only a message handed to a provider can be confirmed`, {
        details: { status: message.status },
      });
    }
    if (found.confirmed) await this.confirmed?.(message);
    return { id, outcome, confirmedAt: iso(found.message.confirmedAt)! };
  }
}

export function messageView(message: Message, attempts: Awaited<ReturnType<MessagesRepository['listAttempts']>>): MessageView {
  return {
    id: message.id,
    channel: message.channel,
    to: message.recipient,
    status: message.status,
    dueAt: iso(message.dueAt)!,
    attempts: message.attempts,
    lastError: message.lastError,
    providerMessageId: message.providerMessageId,
    createdAt: iso(message.createdAt)!,
    sentAt: iso(message.sentAt),
    priority: message.priority,
    ...(message.payload.stored ? { template: { name: message.payload.stored.name, version: message.payload.stored.version } } : {}),

    receipt: message.receipt && { status: message.receipt.status, code: message.receipt.code, at: iso(message.receipt.at)! },
    ...(message.confirmedAt === null ? {} : { confirmedAt: iso(message.confirmedAt)! }),
    deliveryAttempts: attempts.map((attempt) => ({
      attempt: attempt.attemptNo,
      provider: attempt.providerId,
      startedAt: iso(attempt.startedAt)!,
      finishedAt: iso(attempt.finishedAt)!,
      outcome: attempt.outcome,
      error: attempt.error,
    })),
  };
}

/**
 * The provider contract: one vendor account that can send on one channel.
 *
 * A provider does one thing: hand one message to its vendor and say what happened.
 * - It resolves with the vendor's id for the message (`SendResult`) once the vendor accepted it.
 * - It rejects with a `ProviderError` and nothing else. `retryable` is the only decision the
 *   dispatcher needs: `true` for failures that may pass later (network errors, timeouts, HTTP 429
 *   and 5xx, SMTP 4xx, vendor throttling codes), `false` for failures that will fail again the same
 *   way (HTTP 4xx, SMTP 5xx, invalid parameters, bad credentials). `retryAfterMs` is the vendor's
 *   own hint (`Retry-After`) when it gave one. `providerFault` marks a failure of the provider
 *   itself rather than of the message (credentials, account, balance or address refused): the
 *   dispatcher then tries the channel's next provider, where the message may well pass.
 * - It never logs, and what it puts in an error (message, code) never holds a secret; a recipient
 *   appears in an error only masked (`mask.ts`).
 * - Each attempt carries the sluice message id to the vendor where the vendor has a field for it
 *   (SMTP Message-ID, Aliyun OutId, Tencent SessionContext, HTTP Idempotency-Key), so delivery is
 *   at least once and duplicates can be traced or dropped at the vendor.
 * - Every request is bounded by a timeout (`timeoutMs`, default 10 s) and by the caller's signal.
 */
import type { Channel } from '../core/channels.js';

export type { Channel } from '../core/channels.js';

/** The default bound on one vendor request, connection to last byte. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** One message as the dispatcher hands it to a provider. `to` is already normalised (E.164, email, webhook target). */
export interface OutboundMessage {
  /** The sluice message id; sent to the vendor as its idempotency or correlation field where one exists. */
  id: string;
  tenantId: string;
  channel: Channel;
  to: string;
  /** SMS: the vendor template code/id (falls back to the provider's configured one). */
  template?: string;
  /** SMS: the template parameters, in the template's order for vendors that take a list (Tencent). */
  params?: Record<string, string>;
  subject?: string;
  /** Plain-text body: the email text part, the chat message. */
  body?: string;
  /** Email only: the HTML part. */
  html?: string;
  /**
   * A stored template's approved vendor templates, by provider id or kind (the id wins): each
   * SMS provider sends through its own entry ({@link vendorTemplateFor}), so failover to another
   * vendor uses that vendor's template code and sign. `body` is then the rendered text.
   */
  vendor?: Record<string, VendorTemplateRef>;
}

/** One vendor's approved template (admission/templates.ts `VendorTemplate`, as providers read it). */
export interface VendorTemplateRef {
  templateCode: string;
  signName?: string;
  /** Positional vendors: the params in placeholder order. */
  paramOrder?: string[];
}

/** The vendor template this provider (by id, then by kind) sends `message` through, if the message has one. */
export function vendorTemplateFor(message: OutboundMessage, provider: { id: string; kind: string }): VendorTemplateRef | undefined {
  const vendor = message.vendor;
  if (!vendor) return undefined;
  return Object.hasOwn(vendor, provider.id)
    ? vendor[provider.id]
    : Object.hasOwn(vendor, provider.kind)
      ? vendor[provider.kind]
      : undefined;
}

export interface SendResult {
  /** The vendor's id for the message (Aliyun BizId, Tencent SerialNo, SMTP Message-ID...). */
  providerMessageId: string;
}

export interface ProviderErrorOptions {
  retryable: boolean;
  /** A short stable code: the vendor's (`isv.BUSINESS_LIMIT_CONTROL`, `LimitExceeded.PhoneNumberDailyLimit`), `HTTP_503`, `TIMEOUT`, `NETWORK`... */
  code?: string;
  /** The HTTP status or SMTP reply code when there was one. */
  status?: number;
  /** How long the vendor asked us to wait before retrying (`Retry-After`), in ms. */
  retryAfterMs?: number;
  /**
   * The provider itself cannot send (its credentials, account, balance, sender or address were
   * refused), whatever the message: the channel's next provider may succeed. Only meaningful when
   * not `retryable` (a retryable failure moves on anyway).
   */
  providerFault?: boolean;
  cause?: unknown;
}

/** The only way a provider fails. Safe to log: no secrets, recipients masked. */
export class ProviderError extends Error {
  readonly retryable: boolean;
  readonly code: string | undefined;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly providerFault: boolean;

  constructor(message: string, options: ProviderErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderError';
    this.retryable = options.retryable;
    this.code = options.code;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.providerFault = options.providerFault ?? false;
  }
}

export const isProviderError = (error: unknown): error is ProviderError => error instanceof ProviderError;

export interface Provider {
  /** The provider's configured id (unique per deployment). */
  readonly id: string;
  /** Its configured name, set by the provider directory: the `provider` label of the send metrics (else the id). */
  readonly name?: string;
  /** Its kind's name (`ProviderKindDescriptor.kind`). */
  readonly kind: string;
  readonly channel: Channel;
  /** Sends one message. Resolves once the vendor accepted it; rejects with a `ProviderError` only. */
  send(message: OutboundMessage, signal?: AbortSignal): Promise<SendResult>;
  /** Releases pooled connections (SMTP). Safe to call twice. */
  close?(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Classification, shared by every HTTP vendor.
// ---------------------------------------------------------------------------------------------

/** HTTP statuses that may succeed later: timeouts, too early, rate limited, server errors. */
export function isRetryableHttpStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/**
 * HTTP statuses that say the provider's own settings are wrong, not the message: an unfollowed
 * redirect, credentials refused (401, 403, 407), an address that is not there (404, 410).
 */
export function isProviderFaultHttpStatus(status: number): boolean {
  return (status >= 300 && status < 400) || status === 401 || status === 403 || status === 404 || status === 407 || status === 410;
}

/** `Retry-After` as milliseconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A ProviderError for a non-2xx HTTP answer that the vendor did not explain better. */
export function httpStatusError(
  providerId: string,
  status: number,
  options: { detail?: string; retryAfter?: string | null } = {},
): ProviderError {
  const retryAfterMs = parseRetryAfter(options.retryAfter);
  const detail = options.detail ? `: ${truncate(options.detail)}` : '';
  return new ProviderError(`provider ${providerId}: HTTP ${status}${detail}`, {
    retryable: isRetryableHttpStatus(status),
    providerFault: isProviderFaultHttpStatus(status),
    code: `HTTP_${status}`,
    status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/**
 * Turns whatever a transport threw into a ProviderError: our own errors pass through; timeouts,
 * aborts and network failures (refused, reset, DNS) are retryable; anything else is treated as a
 * transport fault and retried too, since a bug of ours would fail the same way every time and the
 * retry limit ends it.
 */
export function toProviderError(
  providerId: string,
  error: unknown,
  context: { timeoutMs: number; signal?: AbortSignal | undefined },
): ProviderError {
  if (error instanceof ProviderError) return error;
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError') {
    return new ProviderError(`provider ${providerId}: no answer within ${context.timeoutMs} ms`, {
      retryable: true,
      code: 'TIMEOUT',
      cause: error,
    });
  }
  if (name === 'AbortError' || context.signal?.aborted) {
    return new ProviderError(`provider ${providerId}: request aborted`, { retryable: true, code: 'ABORTED', cause: error });
  }
  const cause = (error as { cause?: { code?: string } } | null)?.cause;
  const code = cause?.code ?? (error as { code?: string } | null)?.code;
  // The error's code is the reason; its text names the vendor's address (`connect ECONNREFUSED
  // 10.0.0.5:8080`), which the message's tenant reads in its attempts and need not know.
  const message = error instanceof Error ? error.message : String(error);
  const detail = code ? ` ${code}` : ` (${truncate(message)})`;
  return new ProviderError(`provider ${providerId}: network error${detail}`, {
    retryable: true,
    code: 'NETWORK',
    cause: error,
  });
}

/** Vendor text in error messages is bounded: a vendor's HTML error page is not a message. */
export function truncate(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

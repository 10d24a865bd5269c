/**
 * One bounded HTTP exchange on Node's global fetch (undici): the request, a timeout, the caller's
 * abort signal, and the whole answer read as text. Failures to get an answer become retryable
 * ProviderErrors; reading the answer is left to each vendor, since each says "no" differently.
 */
import { toProviderError } from './provider.js';

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** The slice of fetch the providers use; tests and embedders may pass their own. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpExchange {
  providerId: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  fetch?: FetchLike | undefined;
}

/** Answers above this are cut: every vendor answer we read is a small JSON object. */
const MAX_ANSWER_CHARS = 64 * 1024;

export async function postOnce(exchange: HttpExchange): Promise<HttpAnswer> {
  const timeout = AbortSignal.timeout(exchange.timeoutMs);
  const signal = exchange.signal ? AbortSignal.any([exchange.signal, timeout]) : timeout;
  const fetchImpl = exchange.fetch ?? fetch;
  try {
    const response = await fetchImpl(exchange.url, {
      method: 'POST',
      headers: exchange.headers,
      body: exchange.body,
      signal,
      redirect: 'error',
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text: text.length > MAX_ANSWER_CHARS ? text.slice(0, MAX_ANSWER_CHARS) : text,
    };
  } catch (error) {
    // A timeout aborts with a TimeoutError reason; surface it as such even when fetch reports AbortError.
    throw toProviderError(exchange.providerId, timeout.aborted && !exchange.signal?.aborted ? timeout.reason : error, {
      timeoutMs: exchange.timeoutMs,
      signal: exchange.signal,
    });
  }
}

/** Parses a vendor's JSON answer; undefined when it is not JSON (an HTML error page from a proxy). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

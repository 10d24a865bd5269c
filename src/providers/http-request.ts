/**
 * One bounded HTTP exchange: the request, a timeout over the whole exchange, the caller's abort
 * signal, and the whole answer read as text. Failures to get an answer become retryable
 * ProviderErrors; reading the answer is left to each vendor, since each says "no" differently.
 *
 * Built on `node:http`/`node:https` with keep-alive agents rather than the global `fetch`: at
 * thousands of sends per second fetch's WHATWG machinery (Request/Response objects, web streams,
 * `AbortSignal.timeout`) was the largest single cost of a send after SQL.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { scrubRecipient } from './mask.js';
import { httpStatusError, type ProviderError, toProviderError } from './provider.js';

/** The answer's headers; names are case-insensitive. */
export interface AnswerHeaders {
  get(name: string): string | null;
}

export interface HttpAnswer {
  status: number;
  headers: AnswerHeaders;
  text: string;
}

export interface HttpExchange {
  providerId: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /**
   * Resolves the host for a new connection (net's `lookup`): the process's bounded resolver, or
   * the addresses a webhook post checked. Absent: `dns.lookup`, on libuv's thread pool.
   */
  lookup?: LookupFunction | undefined;
  /**
   * The keep-alive pool the connection joins and reuses: `webhook` for tenants' webhook posts,
   * whose connections were made to checked addresses and must not be reused by, or reuse, a
   * vendor's. Default `vendor`.
   */
  pool?: 'vendor' | 'webhook' | undefined;
}

/** Answers above this are cut: every vendor answer we read is a small JSON object. */
const MAX_ANSWER_CHARS = 64 * 1024;

/** Connections are reused across sends (one TLS handshake per socket, not per message). */
const AGENTS = {
  vendor: { http: new HttpAgent({ keepAlive: true, maxFreeSockets: 64 }), https: new HttpsAgent({ keepAlive: true, maxFreeSockets: 64 }) },
  webhook: { http: new HttpAgent({ keepAlive: true, maxFreeSockets: 64 }), https: new HttpsAgent({ keepAlive: true, maxFreeSockets: 64 }) },
};

function answerHeaders(headers: IncomingHttpHeaders): AnswerHeaders {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

export function postOnce(exchange: HttpExchange): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const fail = (error: unknown) => reject(toProviderError(exchange.providerId, error, exchange));
    let url: URL;
    try {
      url = new URL(exchange.url);
    } catch (error) {
      fail(error);
      return;
    }
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') {
      fail(new Error(`unsupported protocol ${url.protocol}`));
      return;
    }
    if (exchange.signal?.aborted) {
      fail(exchange.signal.reason);
      return;
    }
    const body = Buffer.from(exchange.body, 'utf8');
    const options = {
      method: 'POST',
      headers: { ...exchange.headers, 'Content-Length': String(body.length) },
      agent: AGENTS[exchange.pool ?? 'vendor'][secure ? 'https' : 'http'],
      ...(exchange.lookup ? { lookup: exchange.lookup } : {}),
    };
    const request = secure ? httpsRequest(url, options) : httpRequest(url, options);
    const timer = setTimeout(() => request.destroy(new TimeoutError(`no answer within ${exchange.timeoutMs} ms`)), exchange.timeoutMs);
    const onAbort = () => {
      const error = new Error('request aborted');
      error.name = 'AbortError';
      request.destroy(error);
    };
    exchange.signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      exchange.signal?.removeEventListener('abort', onAbort);
    };
    request.on('error', (error) => {
      done();
      fail(error);
    });
    // A redirect is not followed: it comes back as its 3xx status, which no vendor answers on success.
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (text.length < MAX_ANSWER_CHARS) text += chunk;
      });
      response.on('end', () => {
        done();
        resolve({
          status: response.statusCode ?? 0,
          headers: answerHeaders(response.headers),
          text: text.length > MAX_ANSWER_CHARS ? text.slice(0, MAX_ANSWER_CHARS) : text,
        });
      });
      response.on('error', (error) => {
        done();
        fail(error);
      });
    });
    request.end(body);
  });
}

/**
 * An answer that is not the vendor's success as an HTTP-status error: its body as the detail
 * (with the recipient scrubbed), its `Retry-After` honoured.
 */
export function answerStatusError(providerId: string, answer: HttpAnswer, recipient: string): ProviderError {
  return httpStatusError(providerId, answer.status, {
    detail: scrubRecipient(answer.text, recipient),
    retryAfter: answer.headers.get('retry-after'),
  });
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

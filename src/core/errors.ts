/**
 * Every error sluice answers with: one class, a stable code, its HTTP status.
 * docs/errors.md holds the same table; test/errors.test.ts keeps the two in sync.
 */
export const ERROR_CODES = {
  INVALID_REQUEST: { status: 400, meaning: 'The body, a parameter or a header is malformed, of the wrong type, or not allowed.' },
  UNAUTHORIZED: { status: 401, meaning: 'The API key or admin token is missing, unknown or revoked.' },
  TENANT_SUSPENDED: { status: 403, meaning: 'The tenant is suspended; nothing it sends is accepted.' },
  BLACKLISTED: { status: 403, meaning: 'The recipient is on the tenant or the global blacklist for this channel.' },
  DESTINATION_BLOCKED: {
    status: 403,
    meaning: "The SMS recipient's country is not allowed by the tenant's fraud policy (docs/fraud.md).",
  },
  RECIPIENT_SUPPRESSED: {
    status: 403,
    meaning:
      'The recipient opted out, bounced, complained or was suppressed for this channel and category (or every category); the body names the source, the reason and since when (docs/compliance.md).',
  },
  NOT_FOUND: { status: 404, meaning: 'No such resource, or it belongs to another tenant.' },
  CONFLICT: {
    status: 409,
    meaning:
      'The Idempotency-Key was used with a different body, or the resource is in a state that forbids the call (e.g. cancelling a message already sending).',
  },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: 'The request body is larger than the configured limit.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: 'The body is not application/json.' },
  RATE_LIMITED: {
    status: 429,
    meaning: 'A frequency rule for this recipient is at its limit; `Retry-After` says when a retry can succeed.',
  },
  BANNED: { status: 429, meaning: 'The recipient is banned on this channel after breaching a rule; `Retry-After` says when the ban ends.' },
  QUOTA_EXCEEDED: { status: 429, meaning: "The tenant's QPS or daily quota for this channel is used up." },
  FRAUD_SUSPECTED: {
    status: 429,
    meaning:
      "SMS pumping protection: the number prefix is over its velocity, or its country (or prefix) converts below the policy's rate; `Retry-After` says when its window lets it recover (docs/fraud.md).",
  },
  SPEND_LIMIT_REACHED: {
    status: 429,
    meaning:
      "The send's estimated cost would take the tenant's SMS spend this calendar month (UTC) past its cap; `Retry-After` is the next month's start.",
  },
  AUTH_THROTTLED: {
    status: 429,
    meaning:
      'Too many wrong API keys or admin tokens came from this client address; its credentials are not checked until `Retry-After` has passed.',
  },
  INTERNAL: { status: 500, meaning: 'An unexpected failure; the request was not accepted. Logged with its request id.' },
  STORED_DATA_INVALID: {
    status: 500,
    meaning:
      'A stored configuration row (a fraud policy, the SMS prices, a template version) does not have the shape this build reads: written by another build or edited by hand. `row` names it; fix it or save it again. Logged once per row.',
  },
  UNAVAILABLE: { status: 503, meaning: 'A dependency (database, Redis) is down; nothing was accepted. Retry later.' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error with a stable code, safe to show to the caller. `details` goes into the response body. */
export class SluiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Seconds after which a retry can succeed (429s): becomes the `Retry-After` header. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SluiceError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterMs === undefined ? undefined : Math.max(1, Math.ceil(options.retryAfterMs / 1000));
  }

  /** The JSON body of DESIGN.md §8: `{"error": {"code", "message", ...details}}`. */
  toBody(): { error: Record<string, unknown> } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
        ...this.details,
      },
    };
  }
}

/**
 * Every deliberate rejection is a SluiceError; anything else thrown while serving a request is a
 * dependency failing (database down, Redis and SQL unreachable): 503 UNAVAILABLE, nothing accepted.
 * Use as `.catch(unavailableUnlessSluiceError)`.
 */
export function unavailableUnlessSluiceError(error: unknown): never {
  if (error instanceof SluiceError) throw error;
  throw new SluiceError('UNAVAILABLE', 'a dependency is unavailable; nothing was accepted, retry later', { cause: error });
}

/**
 * What `JSON.parse` said, without the text it quotes (`..."password":hunter2"... is not valid
 * JSON`): the text may be a credentials file or a settings file holding the admin token.
 */
export function jsonSyntaxProblem(error: unknown): string {
  const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
  return position === undefined ? 'not valid JSON' : `not valid JSON at position ${position}`;
}

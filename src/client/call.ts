/** The client's transport types: one call, and its answer as a value. */
import type { ErrorCode } from '../core/errors.js';

/** An error answer of the API (docs/errors.md), or `NETWORK` when none came. */
export interface ClientError {
  code: ErrorCode | 'NETWORK';
  message: string;
  /** Seconds until a retry can succeed (429, some 503s). */
  retryAfterSeconds?: number;
  /** Further fields of the error body (`rule`, `field`, `requestId`…). */
  [field: string]: unknown;
}

export type Result<T> = { ok: true; status: number; value: T } | { ok: false; status: number; error: ClientError };

/** One HTTP call of the client (its transport's input). */
export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  auth: 'tenant' | 'admin';
  headers?: Record<string, string>;
  /** Whether a network failure may be retried: the call means the same when repeated. */
  repeatable: boolean;
}

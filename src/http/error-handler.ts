import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { type ErrorCode, SluiceError } from '../core/errors.js';

/** The longest path parameter the router takes (decoded); longer is INVALID_REQUEST. */
export const MAX_PARAM_LENGTH = 1024;

/** Fastify's own error codes, mapped onto ours so every 4xx carries a stable sluice code. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_REQUEST',
  FST_ERR_VALIDATION: 'INVALID_REQUEST',
  // The router's own (through `frameworkErrors`): a malformed percent-escape, an over-long parameter.
  FST_ERR_BAD_URL: 'INVALID_REQUEST',
  FST_ERR_MAX_PARAM_LENGTH: 'INVALID_REQUEST',
};

/** Our messages for Fastify errors whose own text is unhelpful or echoes a huge input. */
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'the URL is not valid: a percent-escape (%XX) does not decode',
  FST_ERR_MAX_PARAM_LENGTH: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`,
};

/**
 * Fastify's text for a request that fails its schema (`body/channel must be …`, joined by `, `),
 * except that an enum names its values: `must be one of sms, email, webhook`, not ajv's "must be
 * equal to one of the allowed values".
 */
export function schemaErrorFormatter(errors: FastifySchemaValidationError[], dataVar: string): Error {
  return new Error(
    errors
      .map((error) => {
        const allowed = error.params.allowedValues;
        const message = error.keyword === 'enum' && Array.isArray(allowed) ? `must be one of ${allowed.join(', ')}` : error.message;
        return `${dataVar}${error.instancePath} ${message}`;
      })
      .join(', '),
  );
}

/** A 413 names the limit it met: the route's, or the server's SLUICE_BODY_LIMIT_BYTES. */
function statingLimit(sluiceError: SluiceError, error: unknown, request: FastifyRequest): SluiceError {
  if (sluiceError.code !== 'PAYLOAD_TOO_LARGE' || error instanceof SluiceError) return sluiceError;
  const limit = request.routeOptions.bodyLimit;
  return new SluiceError('PAYLOAD_TOO_LARGE', `the request body is larger than the limit of ${limit} bytes (SLUICE_BODY_LIMIT_BYTES)`, {
    details: { limitBytes: limit },
  });
}

/** Turns any error into `{"error": {"code", "message", ...}}` with the right status and `Retry-After`. */
export function toSluiceError(error: unknown): SluiceError {
  if (error instanceof SluiceError) return error;
  const fastifyError = error as FastifyError;
  const mapped = fastifyError?.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return new SluiceError(mapped, FASTIFY_MESSAGES[fastifyError.code] ?? fastifyError.message);
  // JSON.parse errors from the body parser carry a status of 400 without a Fastify code.
  if (fastifyError?.statusCode === 400 || fastifyError instanceof SyntaxError)
    return new SluiceError('INVALID_REQUEST', fastifyError.message);
  if (fastifyError?.statusCode === 413) return new SluiceError('PAYLOAD_TOO_LARGE', fastifyError.message);
  if (fastifyError?.statusCode === 415) return new SluiceError('UNSUPPORTED_MEDIA_TYPE', fastifyError.message);
  return new SluiceError('INTERNAL', 'internal error', { cause: error });
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  send(statingLimit(toSluiceError(error), error, request), error, request, reply);
}

/**
 * For routes whose only dependencies are the database and Redis (the admin API): an error that is
 * neither ours nor Fastify's is one of them failing, so 503 UNAVAILABLE (retry), as the message
 * routes answer, not 500.
 */
export function dependencyErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const mapped = toSluiceError(error);
  const sluiceError =
    mapped.code === 'INTERNAL' && !(error instanceof SluiceError)
      ? new SluiceError('UNAVAILABLE', 'a dependency is unavailable (the database or Redis); retry later', { cause: error })
      : statingLimit(mapped, error, request);
  send(sluiceError, error, request, reply);
}

function send(sluiceError: SluiceError, error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  // A 5xx sluice chose to answer (a SluiceError with no cause: shutting down) is logged by whoever
  // raised it, in its words; so is a bad stored row, once where it was read (main/stored-shapes.ts).
  // Anything else is a failure, with its stack.
  const answered = error instanceof SluiceError && error.cause === undefined;
  if (sluiceError.status >= 500 && !answered && sluiceError.code !== 'STORED_DATA_INVALID')
    request.log.error({ err: sluiceError.cause ?? error, code: sluiceError.code }, 'request failed');
  if (sluiceError.retryAfterSeconds !== undefined) reply.header('Retry-After', String(sluiceError.retryAfterSeconds));
  const body = sluiceError.toBody();
  if (sluiceError.status >= 500) (body.error as Record<string, unknown>).requestId = request.id;
  void reply.status(sluiceError.status).send(body);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send(new SluiceError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`).toBody());
}

/**
 * A request Node's HTTP parser cannot take (not HTTP, a bad Content-Length, headers over the
 * limit, not received in time): there is no request to route, so Fastify would write its own
 * body. Ours is the contract's, 400 INVALID_REQUEST, and the connection closes as Node's would.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const message =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'the request headers are larger than the server accepts'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'the request did not arrive in full in time'
        : `the request is not valid HTTP${error.code ? ` (${error.code})` : ''}`;
  const body = JSON.stringify(new SluiceError('INVALID_REQUEST', message).toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

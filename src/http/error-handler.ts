import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, SluiceError } from '../errors.js';

/** Fastify's own error codes, mapped onto ours so every 4xx carries a stable sluice code. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_REQUEST',
  FST_ERR_VALIDATION: 'INVALID_REQUEST',
};

/** Turns any error into `{"error": {"code", "message", ...}}` with the right status and `Retry-After`. */
export function toSluiceError(error: unknown): SluiceError {
  if (error instanceof SluiceError) return error;
  const fastifyError = error as FastifyError;
  const mapped = fastifyError?.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return new SluiceError(mapped, fastifyError.message);
  // JSON.parse errors from the body parser carry a status of 400 without a Fastify code.
  if (fastifyError?.statusCode === 400 || fastifyError instanceof SyntaxError)
    return new SluiceError('INVALID_REQUEST', fastifyError.message);
  if (fastifyError?.statusCode === 413) return new SluiceError('PAYLOAD_TOO_LARGE', fastifyError.message);
  if (fastifyError?.statusCode === 415) return new SluiceError('UNSUPPORTED_MEDIA_TYPE', fastifyError.message);
  return new SluiceError('INTERNAL', 'internal error', { cause: error });
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const sluiceError = toSluiceError(error);
  if (sluiceError.status >= 500) request.log.error({ err: sluiceError.cause ?? error, code: sluiceError.code }, 'request failed');
  if (sluiceError.retryAfterSeconds !== undefined) reply.header('Retry-After', String(sluiceError.retryAfterSeconds));
  const body = sluiceError.toBody();
  if (sluiceError.status >= 500) (body.error as Record<string, unknown>).requestId = request.id;
  void reply.status(sluiceError.status).send(body);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send(new SluiceError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`).toBody());
}

/**
 * The server span of a traced route (`POST /v1/messages`, `POST /v1/messages/batch`): a child of
 * the caller's own `traceparent` when it sent one, so a tenant's trace continues into sluice. Only
 * the sending routes are traced; the admin API and the reads are not messages' work.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SluiceError } from '../core/errors.js';
import { ATTR, contextFromHeaders, inSpan, SpanKind } from '../core/tracing.js';

export function inServerSpan<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  body: (span: { setAttribute(key: string, value: number | string): unknown }) => Promise<T>,
): Promise<T> {
  const route = request.routeOptions.url ?? request.url.split('?')[0]!;
  return inSpan(
    `${request.method} ${route}`,
    {
      kind: SpanKind.SERVER,
      parent: contextFromHeaders(request.headers),
      attributes: { [ATTR.httpMethod]: request.method, [ATTR.httpRoute]: route },
    },
    async (span) => {
      try {
        const result = await body(span);
        if (span.isRecording()) span.setAttribute(ATTR.httpStatus, reply.statusCode);
        return result;
      } catch (error) {
        if (span.isRecording()) span.setAttribute(ATTR.httpStatus, error instanceof SluiceError ? error.status : 500);
        throw error;
      }
    },
  );
}

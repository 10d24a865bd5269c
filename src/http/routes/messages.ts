import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifySchemaValidationError } from 'fastify';
import { IdParam, NoQuery } from '../../api/common.js';
import { errorResponses } from '../../api/errors.js';
import { MessageSearchPage, MessageSearchQuery } from '../../api/lookups.js';
import { AcceptedNew, Canceled, FeedbackBody, FeedbackView, MessageView, Replayed, SendBody, SendHeaders } from '../../api/messages.js';
import { SECURITY } from '../../api/operations.js';
import { SluiceError } from '../../core/errors.js';
import { authenticateTenant, bearerToken, tenantOf } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { schemaErrorFormatter } from '../error-handler.js';
import { inServerSpan } from '../request-span.js';

/** A header that breaks the Idempotency-Key's rule is answered with our message and `field`, not the validator's. */
function headerError(errors: FastifySchemaValidationError[], dataVar: string): Error {
  if (dataVar === 'headers') {
    return new SluiceError('INVALID_REQUEST', 'Idempotency-Key must be 1 to 128 visible ASCII characters', {
      details: { field: 'Idempotency-Key' },
    });
  }
  return schemaErrorFormatter(errors, dataVar);
}

export const messageRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tenantRoute = { onRequest: authenticateTenant(deps) };

    app.post(
      '/v1/messages',
      {
        onRequest: authenticateTenant(deps, { send: true }),
        schemaErrorFormatter: headerError,
        schema: {
          summary: 'Send a message (202), or replay an accepted one by Idempotency-Key (200)',
          security: SECURITY.tenant,
          headers: SendHeaders,
          body: SendBody,
          response: {
            ...errorResponses(400, 401, 403, 409, 413, 415, 429),
            200: Replayed,
            202: AcceptedNew,
          },
        },
      },
      (request, reply) =>
        inServerSpan(request, reply, async () => {
          const outcome = await deps.messages.send(bearerToken(request), request.body, request.headers['idempotency-key']);
          const { replayed, ...answer } = outcome;
          reply.status(replayed ? 200 : 202);
          return answer;
        }),
    );

    app.get(
      '/v1/messages',
      {
        ...tenantRoute,
        schema: {
          summary: "Your tenant's messages, or those to one recipient, newest first, a page at a time (only your tenant's)",
          security: SECURITY.tenant,
          querystring: MessageSearchQuery,
          response: { ...errorResponses(400, 401, 429), 200: MessageSearchPage },
        },
      },
      async (request) => {
        const { to, channel, status, limit, cursor } = request.query;
        // The admin lookup, scoped to the key's tenant: the path names no tenant to take another's.
        return deps.lookups.searchMessages(tenantOf(request).id, {
          ...(to === undefined ? {} : { to }),
          ...(channel === undefined ? {} : { channel }),
          ...(status === undefined ? {} : { status }),
          ...(limit === undefined ? {} : { limit: Number(limit) }),
          ...(cursor === undefined ? {} : { cursor }),
        });
      },
    );

    app.get(
      '/v1/messages/:id',
      {
        ...tenantRoute,
        schema: {
          summary: 'A message of your tenant and its delivery attempts',
          security: SECURITY.tenant,
          params: IdParam,
          querystring: NoQuery,
          response: { ...errorResponses(400, 401, 404, 429), 200: MessageView },
        },
      },
      async (request) => {
        const message = await deps.messages.get(tenantOf(request).id, request.params.id);
        if (!message) throw new SluiceError('NOT_FOUND', 'no such message');
        return message;
      },
    );

    app.delete(
      '/v1/messages/:id',
      {
        ...tenantRoute,
        schema: {
          summary: "Cancel a message not yet sending (409 once it is); its slot under the recipient's rules is given back",
          security: SECURITY.tenant,
          params: IdParam,
          querystring: NoQuery,
          response: { ...errorResponses(400, 401, 404, 409, 429), 200: Canceled },
        },
      },
      async (request) => {
        const result = await deps.messages.cancel(tenantOf(request).id, request.params.id);
        if (result === 'not-found') throw new SluiceError('NOT_FOUND', 'no such message');
        if (result === 'too-late') throw new SluiceError('CONFLICT', 'the message is already sending or done; it cannot be canceled');
        return { id: request.params.id, status: 'canceled' as const };
      },
    );

    app.post(
      '/v1/messages/:id/feedback',
      {
        ...tenantRoute,
        schema: {
          summary:
            'Feedback: the code a message carried was used. Counts one conversion for its country or prefix (SMS pumping protection); a repeat changes nothing; 409 for a message not handed to a provider (not sent, delivered or undelivered)',
          security: SECURITY.tenant,
          params: IdParam,
          querystring: NoQuery,
          body: FeedbackBody,
          response: { ...errorResponses(400, 401, 404, 409, 413, 415, 429), 200: FeedbackView },
        },
      },
      async (request) => {
        const answer = await deps.messages.feedback(tenantOf(request).id, request.params.id, request.body.outcome);
        if (!answer) throw new SluiceError('NOT_FOUND', 'no such message');
        return answer;
      },
    );
  };

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { HttpDeps } from '../../app/contracts.js';
import { SluiceError } from '../../errors.js';
import { authenticateTenant, bearerToken, tenantOf } from '../auth.js';
import { Accepted, ErrorBody, IdParam, SendBody } from '../schemas.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;

export const messageRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tenantRoute = { onRequest: authenticateTenant(deps) };

    app.post(
      '/v1/messages',
      {
        onRequest: authenticateTenant(deps, { send: true }),
        schema: {
          summary: 'Send a message (202), or replay an accepted one by Idempotency-Key (200)',
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
          body: SendBody,
          response: { 200: Accepted, 202: Accepted, '4xx': ErrorBody, '5xx': ErrorBody },
        },
      },
      async (request, reply) => {
        const idempotencyKey = request.headers['idempotency-key'];
        if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
          throw new SluiceError('INVALID_REQUEST', 'Idempotency-Key must be 1 to 128 visible ASCII characters', {
            details: { field: 'Idempotency-Key' },
          });
        }
        const outcome = await deps.messages.send(bearerToken(request), request.body, idempotencyKey);
        return reply.status(outcome.replayed ? 200 : 202).send({ id: outcome.id, status: outcome.status });
      },
    );

    app.get(
      '/v1/messages/:id',
      { ...tenantRoute, schema: { summary: 'A message of your tenant and its delivery attempts', params: IdParam } },
      async (request) => {
        const message = await deps.messages.get(tenantOf(request).id, request.params.id);
        if (!message) throw new SluiceError('NOT_FOUND', 'no such message');
        return message;
      },
    );

    app.delete(
      '/v1/messages/:id',
      { ...tenantRoute, schema: { summary: 'Cancel a message not yet sending', params: IdParam } },
      async (request) => {
        const result = await deps.messages.cancel(tenantOf(request).id, request.params.id);
        if (result === 'not-found') throw new SluiceError('NOT_FOUND', 'no such message');
        if (result === 'too-late') throw new SluiceError('CONFLICT', 'the message is already sending or done; it cannot be canceled');
        return { id: request.params.id, status: 'canceled' };
      },
    );
  };

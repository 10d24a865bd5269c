import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { SendRequest } from '../../admission/context.js';
import type { HttpDeps } from '../../services/contracts.js';
import { authenticateTenant, bearerToken } from '../auth.js';
import { errorResponses, SECURITY } from '../schemas.js';
import { BatchBody, BatchResults, MAX_BATCH } from '../template-schemas.js';

/** Room for MAX_BATCH messages of typical size (a few hundred bytes each), whatever the single-send limit. */
export const BATCH_BODY_LIMIT = 4 * 1024 * 1024;

const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[\\x21-\\x7e]+$',
  description: 'Message i of the batch carries `<key>#<i>`: a replay answers the same results, sending nothing again',
});

/** The two body forms as one list of sends. */
function sendsOf(body: typeof BatchBody.static): SendRequest[] {
  if ('messages' in body) return body.messages;
  const { channel, template, params, sendAt, priority, recipients } = body;
  return recipients.map((recipient) => ({
    channel,
    to: recipient.to,
    template,
    ...(params || recipient.params ? { params: { ...params, ...recipient.params } } : {}),
    ...(sendAt === undefined ? {} : { sendAt }),
    ...(priority === undefined ? {} : { priority }),
  }));
}

export const batchRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/messages/batch',
      {
        onRequest: authenticateTenant(deps, { send: true }),
        bodyLimit: Math.max(BATCH_BODY_LIMIT, deps.bodyLimitBytes),
        schema: {
          summary: `Send 1 to ${MAX_BATCH} messages (or a campaign: one template, many recipients); each is admitted on its own, results in request order`,
          security: SECURITY.tenant,
          headers: Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKeyHeader) }),
          body: BatchBody,
          response: { ...errorResponses(400, 401, 413, 415), 200: BatchResults },
        },
      },
      async (request) => {
        const results = await deps.messages.sendBatch(bearerToken(request), sendsOf(request.body), request.headers['idempotency-key']);
        return { results };
      },
    );
  };

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyRequest, FastifySchemaValidationError } from 'fastify';
import type { SendRequest } from '../../admission/context.js';
import { BatchBody, BatchEnvelope, BatchHeaders, BatchResults, MAX_BATCH, Recipient } from '../../api/batch.js';
import { errorResponses } from '../../api/errors.js';
import { SendBody } from '../../api/messages.js';
import { SECURITY } from '../../api/operations.js';
import { SluiceError } from '../../core/errors.js';
import { ATTR } from '../../core/tracing.js';
import { authenticateTenant, bearerToken } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { schemaErrorFormatter } from '../error-handler.js';
import { inServerSpan } from '../request-span.js';

/** Room for MAX_BATCH messages of typical size (a few hundred bytes each), whatever the single-send limit. */
export const BATCH_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * `item` checked with `schema` by the route's own validator (Fastify's ajv, as every route
 * validates: compiled once per route), or the INVALID_REQUEST a single send of it would get, in
 * Fastify's words (`body/to must NOT have more than 320 characters`).
 */
function checked<S extends TSchema>(request: FastifyRequest, schema: S, item: unknown): Static<S> | SluiceError {
  const validate = request.compileValidationSchema(schema, 'body');
  if (validate(item)) return item as Static<S>;
  const errors = (validate.errors ?? []) as FastifySchemaValidationError[];
  return new SluiceError(
    'INVALID_REQUEST',
    errors.length > 0 ? schemaErrorFormatter(errors, 'body').message : 'body is not a valid message',
  );
}

/** The two body forms as one list of sends, a message that fails its schema as its refusal. */
function sendsOf(request: FastifyRequest, body: Static<typeof BatchEnvelope>): (SendRequest | SluiceError)[] {
  if ('messages' in body) return body.messages.map((message) => checked(request, SendBody, message));
  const { channel, template, vendorTemplate, params, sendAt, priority, category, recipients } = body;
  if ((template === undefined) === (vendorTemplate === undefined))
    throw new SluiceError('INVALID_REQUEST', "a campaign names `template` (stored) or `vendorTemplate` (the vendor's code): one of them", {
      details: { field: 'template' },
    });
  return recipients.map((item) => {
    const recipient = checked(request, Recipient, item);
    if (recipient instanceof SluiceError) return recipient;
    return {
      channel,
      to: recipient.to,
      ...(template === undefined ? {} : { template }),
      ...(vendorTemplate === undefined ? {} : { vendorTemplate }),
      ...(params || recipient.params ? { params: { ...params, ...recipient.params } } : {}),
      ...(sendAt === undefined ? {} : { sendAt }),
      ...(priority === undefined ? {} : { priority }),
      ...(category === undefined ? {} : { category }),
    };
  });
}

export const batchRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/messages/batch',
      {
        onRequest: authenticateTenant(deps, { send: true }),
        bodyLimit: Math.max(BATCH_BODY_LIMIT, deps.bodyLimitBytes),
        // The envelope is validated whole; /docs shows each message's schema too.
        config: { documentedBody: BatchBody },
        schema: {
          summary: `Send 1 to ${MAX_BATCH} messages (or a campaign: one template, many recipients); each is admitted on its own, results in request order`,
          security: SECURITY.tenant,
          headers: BatchHeaders,
          body: BatchEnvelope,
          response: { ...errorResponses(400, 401, 413, 415, 429), 200: BatchResults },
        },
      },
      (request, reply) =>
        inServerSpan(request, reply, async (span) => {
          const sends = sendsOf(request, request.body);
          span.setAttribute(ATTR.batchCount, sends.length);
          const results = await deps.messages.sendBatch(bearerToken(request), sends, request.headers['idempotency-key']);
          return { results };
        }),
    );
  };

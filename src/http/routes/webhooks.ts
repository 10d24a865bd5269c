/**
 * Tenants' webhook endpoints under /v1/admin/tenants/:id/webhooks, behind SLUICE_ADMIN_TOKEN like
 * the rest of the admin API. Another tenant's webhook or event answers 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam } from '../../api/common.js';
import {
  NewWebhookBody,
  WebhookDeleted,
  WebhookEventList,
  WebhookEventParams,
  WebhookEventQuery,
  WebhookEventView,
  WebhookList,
  WebhookParams,
  WebhookPatchBody,
  WebhookView,
  WebhookWithSecret,
} from '../../api/webhooks.js';
import { SluiceError } from '../../core/errors.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const webhookRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const webhooks = deps.webhooks;
    const found = async <T>(value: Promise<T | undefined>, what: string): Promise<T> => {
      const result = await value;
      if (result === undefined) throw new SluiceError('NOT_FOUND', `no such ${what}`);
      return result;
    };

    app.post(
      '/v1/admin/tenants/:id/webhooks',
      {
        schema: adminSchema(
          "Subscribe an endpoint to the tenant's message events; the signing secret is in this answer only",
          { params: IdParam, body: NewWebhookBody },
          { 201: WebhookWithSecret },
        ),
      },
      async (request, reply) => reply.status(201).send(await found(webhooks.create(request.params.id, request.body), 'tenant')),
    );
    app.get(
      '/v1/admin/tenants/:id/webhooks',
      { schema: adminSchema("List the tenant's webhooks (never their secrets)", { params: IdParam }, { 200: WebhookList }) },
      async (request) => ({ webhooks: await found(webhooks.list(request.params.id), 'tenant') }),
    );
    app.get(
      '/v1/admin/tenants/:id/webhooks/:webhookId',
      { schema: adminSchema('Read a webhook', { params: WebhookParams }, { 200: WebhookView }) },
      async (request) => found(webhooks.get(request.params.id, request.params.webhookId), 'webhook'),
    );
    app.patch(
      '/v1/admin/tenants/:id/webhooks/:webhookId',
      {
        schema: adminSchema(
          'Change a webhook (url, events, description, enabled)',
          { params: WebhookParams, body: WebhookPatchBody },
          { 200: WebhookView },
        ),
      },
      async (request) => found(webhooks.update(request.params.id, request.params.webhookId, request.body), 'webhook'),
    );
    app.delete(
      '/v1/admin/tenants/:id/webhooks/:webhookId',
      { schema: adminSchema('Remove a webhook and its events', { params: WebhookParams }, { 200: WebhookDeleted }) },
      async (request) => {
        if (!(await webhooks.remove(request.params.id, request.params.webhookId))) throw new SluiceError('NOT_FOUND', 'no such webhook');
        return { deleted: true as const };
      },
    );
    app.post(
      '/v1/admin/tenants/:id/webhooks/:webhookId/rotate-secret',
      {
        schema: adminSchema(
          'A new signing secret (in this answer only); the old one keeps signing too for SLUICE_WEBHOOK_ROTATE_GRACE_HOURS',
          { params: WebhookParams },
          { 200: WebhookWithSecret },
        ),
      },
      async (request) => found(webhooks.rotateSecret(request.params.id, request.params.webhookId), 'webhook'),
    );
    app.get(
      '/v1/admin/tenants/:id/webhooks/:webhookId/events',
      {
        schema: adminSchema(
          "A webhook's events in a status (default failed: given up after 24 h of retries), newest first",
          { params: WebhookParams, querystring: WebhookEventQuery },
          { 200: WebhookEventList },
        ),
      },
      async (request) => ({
        events: await found(
          webhooks.listEvents(request.params.id, request.params.webhookId, {
            ...(request.query.status ? { status: request.query.status } : {}),
            ...(request.query.limit ? { limit: Number(request.query.limit) } : {}),
          }),
          'webhook',
        ),
      }),
    );
    app.post(
      '/v1/admin/tenants/:id/webhooks/:webhookId/events/:eventId/replay',
      {
        schema: adminSchema(
          'Post an event again (pending at once, retried for another 24 h)',
          { params: WebhookEventParams },
          { 200: WebhookEventView },
        ),
      },
      async (request) => found(webhooks.replay(request.params.id, request.params.webhookId, request.params.eventId), 'event'),
    );
  };

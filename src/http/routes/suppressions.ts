/**
 * Suppressions and the consent record: the key's tenant's (`/v1/suppressions`,
 * `/v1/recipients/…/consent`, source `api`) and any tenant's behind SLUICE_ADMIN_TOKEN
 * (`/v1/admin/tenants/:id/…`, source `admin`).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { IdParam } from '../../api/common.js';
import { errorResponses } from '../../api/errors.js';
import { SECURITY } from '../../api/operations.js';
import {
  ConsentHistory,
  ConsentQuery,
  RecipientParams,
  RecipientSuppressions,
  SuppressBody,
  Suppressed,
  SuppressionPage,
  SuppressionQuery,
  TenantRecipientParams,
  Unsuppressed,
  UnsuppressQuery,
} from '../../api/suppressions.js';
import { adminSchema } from '../admin-schema.js';
import { authenticateTenant, requireAdmin, tenantOf } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

const evidenceOf = (request: FastifyRequest) => ({
  address: request.ip,
  ...(typeof request.headers['user-agent'] === 'string' ? { userAgent: request.headers['user-agent'] } : {}),
});

const listOptions = (query: { channel?: string; category?: string; source?: string; limit?: string; after?: string }) => ({
  ...(query.channel === undefined ? {} : { channel: query.channel as 'sms' }),
  ...(query.category === undefined ? {} : { category: query.category }),
  ...(query.source === undefined ? {} : { source: query.source as 'api' }),
  ...(query.limit === undefined ? {} : { limit: Number(query.limit) }),
  ...(query.after === undefined ? {} : { after: query.after }),
});

export const suppressionRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const service = deps.suppressions;
    const tenant = { onRequest: authenticateTenant(deps) };
    const tenantSchema = <T extends object, S extends object>(summary: string, inputs: T, success: S) => ({
      summary,
      security: SECURITY.tenant,
      ...inputs,
      response: { ...errorResponses(400, 401, 429), ...success },
    });
    const one = '/v1/suppressions/:channel/:recipient';
    app.get(
      one,
      {
        ...tenant,
        schema: tenantSchema("A recipient's suppressions on a channel", { params: RecipientParams }, { 200: RecipientSuppressions }),
      },
      (request) => service.get(tenantOf(request).id, request.params.channel, request.params.recipient),
    );
    app.put(
      one,
      {
        ...tenant,
        schema: tenantSchema(
          'Suppress a recipient (a category, or `*`: every one)',
          { params: RecipientParams, body: SuppressBody },
          { 200: Suppressed },
        ),
      },
      (request) =>
        service.suppress(tenantOf(request).id, request.params.channel, request.params.recipient, {
          ...(request.body ?? {}),
          source: 'api',
          evidence: evidenceOf(request),
        }),
    );
    app.delete(
      one,
      {
        ...tenant,
        schema: tenantSchema(
          "Lift a recipient's suppression of a category (default `*`)",
          { params: RecipientParams, querystring: UnsuppressQuery },
          { 200: Unsuppressed },
        ),
      },
      (request) =>
        service.unsuppress(tenantOf(request).id, request.params.channel, request.params.recipient, {
          ...(request.query.category === undefined ? {} : { category: request.query.category }),
          source: 'api',
          evidence: evidenceOf(request),
        }),
    );
    app.get(
      '/v1/suppressions',
      {
        ...tenant,
        schema: tenantSchema(
          "Your tenant's suppressions, a page at a time, by channel, recipient, category",
          { querystring: SuppressionQuery },
          { 200: SuppressionPage },
        ),
      },
      (request) => service.list(tenantOf(request).id, listOptions(request.query)),
    );
    app.get(
      '/v1/recipients/:channel/:recipient/consent',
      {
        ...tenant,
        schema: tenantSchema(
          "A recipient's consent record in your tenant, oldest first",
          { params: RecipientParams, querystring: ConsentQuery },
          { 200: ConsentHistory },
        ),
      },
      (request) =>
        service.consent(tenantOf(request).id, request.params.channel, request.params.recipient, {
          ...(request.query.limit === undefined ? {} : { limit: Number(request.query.limit) }),
          ...(request.query.after === undefined ? {} : { after: request.query.after }),
        }),
    );
  };

export const adminSuppressionRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const service = deps.suppressions;
    const one = '/v1/admin/tenants/:id/suppressions/:channel/:recipient';
    app.get(
      one,
      { schema: adminSchema("A tenant's recipient's suppressions", { params: TenantRecipientParams }, { 200: RecipientSuppressions }) },
      (request) => service.get(request.params.id, request.params.channel, request.params.recipient),
    );
    app.put(
      one,
      { schema: adminSchema("Suppress a tenant's recipient", { params: TenantRecipientParams, body: SuppressBody }, { 200: Suppressed }) },
      (request) =>
        service.suppress(request.params.id, request.params.channel, request.params.recipient, {
          ...(request.body ?? {}),
          source: 'admin',
          evidence: evidenceOf(request),
        }),
    );
    app.delete(
      one,
      {
        schema: adminSchema(
          "Lift a tenant's recipient's suppression",
          { params: TenantRecipientParams, querystring: UnsuppressQuery },
          { 200: Unsuppressed },
        ),
      },
      (request) =>
        service.unsuppress(request.params.id, request.params.channel, request.params.recipient, {
          ...(request.query.category === undefined ? {} : { category: request.query.category }),
          source: 'admin',
          evidence: evidenceOf(request),
        }),
    );
    app.get(
      '/v1/admin/tenants/:id/suppressions',
      {
        schema: adminSchema(
          "A tenant's suppressions, a page at a time",
          { params: IdParam, querystring: SuppressionQuery },
          { 200: SuppressionPage },
        ),
      },
      (request) => service.list(request.params.id, listOptions(request.query)),
    );
    app.get(
      '/v1/admin/tenants/:id/recipients/:channel/:recipient/consent',
      {
        schema: adminSchema(
          "A tenant's recipient's consent record",
          { params: TenantRecipientParams, querystring: ConsentQuery },
          { 200: ConsentHistory },
        ),
      },
      (request) =>
        service.consent(request.params.id, request.params.channel, request.params.recipient, {
          ...(request.query.limit === undefined ? {} : { limit: Number(request.query.limit) }),
          ...(request.query.after === undefined ? {} : { after: request.query.after }),
        }),
    );
  };

/** Tenants and their API keys under /v1/admin/tenants, behind SLUICE_ADMIN_TOKEN (off when the variable is empty). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam } from '../../api/common.js';
import {
  ApiKeyList,
  ApiKeyRevoked,
  CreatedTenant,
  IssuedApiKey,
  KeyParam,
  NewApiKeyQuery,
  NewTenantBody,
  TenantBacklog,
  TenantDetails,
  TenantPage,
  TenantPatchBody,
  TenantQuery,
} from '../../api/tenants.js';
import { SluiceError } from '../../core/errors.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const tenantRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Every route of this plugin (the hook is encapsulated to it), whatever spelling of the path
    // matched it: the router decodes `/v1/%61dmin/…`, so a test of the raw URL is no guard.
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const tenants = deps.tenants;
    const tenantOr404 = async <T>(value: Promise<T | undefined>): Promise<T> => {
      const found = await value;
      if (found === undefined) throw new SluiceError('NOT_FOUND', 'no such tenant');
      return found;
    };

    app.post(
      '/v1/admin/tenants',
      {
        schema: adminSchema(
          'Create a tenant; its API key is shown once (409: the name is taken)',
          { body: NewTenantBody },
          { 201: CreatedTenant },
          { conflicts: true },
        ),
      },
      async (request, reply) => {
        const created = await tenants.createTenant(request.body.name, request.body.qpsLimit, request.body.sendWeight);
        return reply.status(201).send(created);
      },
    );
    app.get(
      '/v1/admin/tenants',
      { schema: adminSchema('List tenants, a page at a time, by id (creation order)', { querystring: TenantQuery }, { 200: TenantPage }) },
      async (request) => {
        const { limit, after } = request.query;
        return tenants.listTenants({ ...(limit === undefined ? {} : { limit: Number(limit) }), ...(after === undefined ? {} : { after }) });
      },
    );
    app.get(
      '/v1/admin/tenants/:id',
      { schema: adminSchema('Read a tenant', { params: IdParam }, { 200: TenantDetails }) },
      async (request) => tenantOr404(tenants.getTenant(request.params.id)),
    );
    app.get(
      '/v1/admin/tenants/:id/backlog',
      {
        schema: adminSchema(
          "What waits to be sent on each of a tenant's channels and lanes: due now, scheduled later, in flight, and the oldest due message",
          { params: IdParam },
          { 200: TenantBacklog },
        ),
      },
      async (request) => tenantOr404(tenants.getBacklog(request.params.id)),
    );
    app.patch(
      '/v1/admin/tenants/:id',
      {
        schema: adminSchema(
          'Suspend or resume a tenant, set its quotas and its send weight',
          { params: IdParam, body: TenantPatchBody },
          { 200: TenantDetails },
        ),
      },
      async (request) => tenantOr404(tenants.updateTenant(request.params.id, request.body)),
    );

    app.get(
      '/v1/admin/tenants/:id/keys',
      { schema: adminSchema("List a tenant's API keys (never the keys themselves)", { params: IdParam }, { 200: ApiKeyList }) },
      async (request) => ({ keys: await tenantOr404(tenants.listApiKeys(request.params.id)) }),
    );
    app.post(
      '/v1/admin/tenants/:id/keys',
      {
        schema: adminSchema(
          "Issue a new API key, shown once; the tenant's other keys are revoked everywhere at once unless keepOthers",
          { params: IdParam, querystring: NewApiKeyQuery },
          { 201: IssuedApiKey },
        ),
      },
      async (request, reply) => {
        const issued = await tenantOr404(tenants.issueApiKey(request.params.id, { keepOthers: request.query.keepOthers === 'true' }));
        return reply.status(201).send(issued);
      },
    );
    app.delete(
      '/v1/admin/tenants/:id/keys/:keyId',
      { schema: adminSchema('Revoke one API key, everywhere at once', { params: KeyParam }, { 200: ApiKeyRevoked }) },
      async (request) => {
        if (!(await tenants.revokeApiKey(request.params.id, request.params.keyId)))
          throw new SluiceError('NOT_FOUND', 'the tenant has no such active key');
        return { revoked: true as const };
      },
    );
  };

/** Delivery providers under /v1/admin/providers, behind SLUICE_ADMIN_TOKEN; their receipt tokens are in `receipts.ts`. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam } from '../../api/common.js';
import { NewProviderBody, ProviderDeleted, ProviderList, ProviderPatchBody, ProviderQuery, ProviderView } from '../../api/providers.js';
import { SluiceError } from '../../core/errors.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const providerRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Every route of this plugin (the hook is encapsulated to it), whatever spelling of the path
    // matched it: the router decodes `/v1/%61dmin/…`, so a test of the raw URL is no guard.
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const providers = deps.providers;
    app.post(
      '/v1/admin/providers',
      {
        schema: adminSchema(
          'Register a provider for a tenant or for all (*); its secret is sealed and never shown (409: the name is taken in this scope and channel)',
          { body: NewProviderBody },
          { 201: ProviderView },
          { conflicts: true },
        ),
      },
      async (request, reply) => {
        const body = request.body;
        return reply.status(201).send(await providers.createProvider(body));
      },
    );
    app.get(
      '/v1/admin/providers',
      { schema: adminSchema('List providers', { querystring: ProviderQuery }, { 200: ProviderList }) },
      async (request) => ({
        providers: await providers.listProviders(request.query),
      }),
    );
    app.patch(
      '/v1/admin/providers/:id',
      {
        schema: adminSchema(
          'Change a provider (name, priority, QPS, config, secret, enabled)',
          { params: IdParam, body: ProviderPatchBody },
          { 200: ProviderView },
          { conflicts: true },
        ),
      },
      async (request) => {
        const updated = await providers.updateProvider(request.params.id, request.body);
        if (!updated) throw new SluiceError('NOT_FOUND', 'no such provider');
        return updated;
      },
    );
    app.delete(
      '/v1/admin/providers/:id',
      { schema: adminSchema('Remove a provider', { params: IdParam }, { 200: ProviderDeleted }) },
      async (request) => {
        if (!(await providers.deleteProvider(request.params.id))) throw new SluiceError('NOT_FOUND', 'no such provider');
        return { deleted: true as const };
      },
    );
  };

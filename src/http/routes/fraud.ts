import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam } from '../../api/common.js';
import { FraudPolicyBody, FraudPolicyView, FraudStatusView, SmsPricesBody, SmsPricesView } from '../../api/fraud.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

/** SMS pumping protection, under /v1/admin behind SLUICE_ADMIN_TOKEN (docs/fraud.md). */
export const fraudRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const service = deps.fraud;
    const policy = '/v1/admin/tenants/:id/fraud/sms';

    app.put(
      policy,
      {
        schema: adminSchema(
          "Replace a tenant's SMS fraud policy: countries, prefix velocity, conversion, monthly spend cap, safe list (live everywhere within a second)",
          { params: IdParam, body: FraudPolicyBody },
          { 200: FraudPolicyView },
        ),
      },
      async (request) => service.setPolicy(request.params.id, request.body),
    );
    app.get(
      policy,
      { schema: adminSchema("A tenant's SMS fraud policy", { params: IdParam }, { 200: FraudPolicyView }) },
      async (request) => service.getPolicy(request.params.id),
    );
    app.get(
      `${policy}/status`,
      {
        schema: adminSchema(
          "What a tenant's SMS fraud protection did: the month's estimated spend against the cap, today's refusals (and would-be refusals) by rule",
          { params: IdParam },
          { 200: FraudStatusView },
        ),
      },
      async (request) => service.status(request.params.id),
    );
    app.put(
      '/v1/admin/prices/sms',
      {
        schema: adminSchema(
          "The SMS prices every tenant's spend is estimated with: per country, and a default",
          { body: SmsPricesBody },
          { 200: SmsPricesView },
          { conflicts: true },
        ),
      },
      async (request) => service.setPrices(request.body),
    );
    app.get('/v1/admin/prices/sms', { schema: adminSchema('The SMS prices', {}, { 200: SmsPricesView }) }, async () => service.getPrices());
  };

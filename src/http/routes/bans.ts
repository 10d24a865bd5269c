/** Lifting a recipient's ban, behind SLUICE_ADMIN_TOKEN; its status is a lookup (`admin-lookups.ts`). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BanLifted, BanParams, LiftBanQuery } from '../../api/bans.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const banRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Every route of this plugin (the hook is encapsulated to it), whatever spelling of the path
    // matched it: the router decodes `/v1/%61dmin/…`, so a test of the raw URL is no guard.
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const bans = deps.bans;
    app.delete(
      '/v1/admin/tenants/:id/bans/:channel/:to',
      { schema: adminSchema("Lift a recipient's ban", { params: BanParams, querystring: LiftBanQuery }, { 200: BanLifted }) },
      async (request) => {
        const lifted = await bans.liftBan(request.params.id, request.params.channel, request.params.to, {
          resetCounts: request.query.resetCounts === 'true',
        });
        return { lifted };
      },
    );
  };

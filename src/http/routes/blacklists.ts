/** A tenant's blacklist and the global one (every tenant), behind SLUICE_ADMIN_TOKEN: the same bodies and answers. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  BlacklistAdded,
  BlacklistBody,
  BlacklistPage,
  BlacklistQuery,
  BlacklistRemoveBody,
  BlacklistRemoved,
} from '../../api/blacklists.js';
import { IdParam } from '../../api/common.js';
import type { BlacklistScope } from '../../services/contracts.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const blacklistRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Every route of this plugin (the hook is encapsulated to it), whatever spelling of the path
    // matched it: the router decodes `/v1/%61dmin/…`, so a test of the raw URL is no guard.
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const blacklists = deps.blacklists;
    /** The three routes of one blacklist: a tenant's (`params`: its id) or the global one. */
    const routesAt = (url: string, scopeOf: (params: { id?: string }) => BlacklistScope, whose: string, params?: typeof IdParam) => {
      app.post(
        url,
        {
          schema: adminSchema(
            `Blacklist recipients (${whose})`,
            { ...(params ? { params } : {}), body: BlacklistBody },
            { 200: BlacklistAdded },
          ),
        },
        async (request) => {
          const { channel = '*', recipients, reason } = request.body;
          return blacklists.addToBlacklist(scopeOf(request.params as { id?: string }), channel, recipients, reason);
        },
      );
      app.delete(
        url,
        {
          schema: adminSchema(
            `Remove recipients from the blacklist (${whose})`,
            { ...(params ? { params } : {}), body: BlacklistRemoveBody },
            { 200: BlacklistRemoved },
          ),
        },
        async (request) => {
          const { channel = '*', recipients } = request.body;
          return blacklists.removeFromBlacklist(scopeOf(request.params as { id?: string }), channel, recipients);
        },
      );
      app.get(
        url,
        {
          schema: adminSchema(
            `List the blacklist (${whose}), a page at a time, by channel then recipient`,
            { ...(params ? { params } : {}), querystring: BlacklistQuery },
            { 200: BlacklistPage },
          ),
        },
        async (request) => {
          const { channel, limit, after } = request.query;
          return blacklists.listBlacklist(scopeOf(request.params as { id?: string }), {
            ...(channel === undefined ? {} : { channel }),
            ...(limit === undefined ? {} : { limit: Number(limit) }),
            ...(after === undefined ? {} : { after }),
          });
        },
      );
    };
    routesAt('/v1/admin/tenants/:id/blacklist', (params) => ({ tenant: params.id! }), "a tenant's", IdParam);
    routesAt('/v1/admin/blacklist', () => 'global', 'global: every tenant');
  };

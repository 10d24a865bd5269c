import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import { BanLifted, BanParams, LiftBanQuery } from '../../api/bans.js';
import {
  BlacklistAdded,
  BlacklistBody,
  BlacklistPage,
  BlacklistQuery,
  BlacklistRemoveBody,
  BlacklistRemoved,
} from '../../api/blacklists.js';
import { ChannelParam, IdParam, NoQuery } from '../../api/common.js';
import { type ErrorStatus, errorResponses } from '../../api/errors.js';
import { SECURITY } from '../../api/operations.js';
import { NewProviderBody, ProviderDeleted, ProviderList, ProviderPatchBody, ProviderQuery, ProviderView } from '../../api/providers.js';
import { RiskActionParam, RiskRuleSetBody, RiskRuleSetView } from '../../api/risk.js';
import { RuleSetBody, RuleSetView } from '../../api/rules.js';
import {
  ApiKeyList,
  ApiKeyRevoked,
  CreatedTenant,
  IssuedApiKey,
  KeyParam,
  NewApiKeyQuery,
  NewTenantBody,
  TenantDetails,
  TenantPage,
  TenantPatchBody,
  TenantQuery,
} from '../../api/tenants.js';
import { SluiceError } from '../../core/errors.js';
import type { BlacklistScope } from '../../services/contracts.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

/**
 * An admin route's schema: the admin token, and the errors every admin route can answer (401; 404
 * while the admin API is off), those of its inputs (400 for parameters, query or body, and for a
 * query parameter the route does not take; 413 and 415 for a body) and `conflicts` (409), beside
 * its success responses.
 */
export function adminSchema<T extends { params?: TSchema; querystring?: TSchema; body?: TSchema }>(
  summary: string,
  inputs: T,
  success: Record<number, TSchema>,
  options: { conflicts?: boolean } = {},
) {
  // Every admin route validates its query string, an empty one at least: 400 for any parameter.
  // 429: AUTH_THROTTLED, an address past its wrong-credential limit.
  const statuses: ErrorStatus[] = [400, 401, 404, 429];
  if (inputs.body) statuses.push(413, 415);
  if (options.conflicts) statuses.push(409);
  return {
    summary,
    security: SECURITY.admin,
    ...inputs,
    querystring: (inputs.querystring ?? NoQuery) as T['querystring'] extends TSchema ? T['querystring'] : typeof NoQuery,
    response: { ...errorResponses(...statuses), ...success },
  };
}

/** Operator API under /v1/admin, behind SLUICE_ADMIN_TOKEN (off when the variable is empty). */
export const adminRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Every route of this plugin (the hook is encapsulated to it), whatever spelling of the path
    // matched it: the router decodes `/v1/%61dmin/…`, so a test of the raw URL is no guard.
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const admin = deps.admin;
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
        const created = await admin.createTenant(request.body.name, request.body.qpsLimit);
        return reply.status(201).send(created);
      },
    );
    app.get(
      '/v1/admin/tenants',
      { schema: adminSchema('List tenants, a page at a time, by id (creation order)', { querystring: TenantQuery }, { 200: TenantPage }) },
      async (request) => {
        const { limit, after } = request.query;
        return admin.listTenants({ ...(limit === undefined ? {} : { limit: Number(limit) }), ...(after === undefined ? {} : { after }) });
      },
    );
    app.get(
      '/v1/admin/tenants/:id',
      { schema: adminSchema('Read a tenant', { params: IdParam }, { 200: TenantDetails }) },
      async (request) => tenantOr404(admin.getTenant(request.params.id)),
    );
    app.patch(
      '/v1/admin/tenants/:id',
      {
        schema: adminSchema(
          'Suspend or resume a tenant, set its quotas',
          { params: IdParam, body: TenantPatchBody },
          { 200: TenantDetails },
        ),
      },
      async (request) => tenantOr404(admin.updateTenant(request.params.id, request.body)),
    );

    app.get(
      '/v1/admin/tenants/:id/keys',
      { schema: adminSchema("List a tenant's API keys (never the keys themselves)", { params: IdParam }, { 200: ApiKeyList }) },
      async (request) => ({ keys: await tenantOr404(admin.listApiKeys(request.params.id)) }),
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
        const issued = await tenantOr404(admin.issueApiKey(request.params.id, { keepOthers: request.query.keepOthers === 'true' }));
        return reply.status(201).send(issued);
      },
    );
    app.delete(
      '/v1/admin/tenants/:id/keys/:keyId',
      { schema: adminSchema('Revoke one API key, everywhere at once', { params: KeyParam }, { 200: ApiKeyRevoked }) },
      async (request) => {
        if (!(await admin.revokeApiKey(request.params.id, request.params.keyId)))
          throw new SluiceError('NOT_FOUND', 'the tenant has no such active key');
        return { revoked: true as const };
      },
    );

    app.put(
      '/v1/admin/tenants/:id/rules/:channel',
      {
        schema: adminSchema(
          "Replace a tenant channel's frequency rules (live within a second everywhere); GET's answer can be PUT back",
          { params: ChannelParam, body: RuleSetBody },
          { 200: RuleSetView },
        ),
      },
      async (request) => {
        const { rules, fallback, channel } = request.body;
        if (channel !== undefined && channel !== request.params.channel) {
          throw new SluiceError('INVALID_REQUEST', `the body's channel (${channel}) is not the path's (${request.params.channel})`, {
            details: { field: 'channel' },
          });
        }
        const withBan = (rule: (typeof rules)[number]) => ({ ...rule, banSeconds: rule.banSeconds ?? 0 });
        return admin.setRules(
          request.params.id,
          request.params.channel,
          rules.map(withBan),
          fallback ? { mode: fallback.mode, ...(fallback.rules ? { rules: fallback.rules.map(withBan) } : {}) } : null,
        );
      },
    );
    app.get(
      '/v1/admin/tenants/:id/rules/:channel',
      { schema: adminSchema("A tenant channel's rules, in the shape PUT takes", { params: ChannelParam }, { 200: RuleSetView }) },
      async (request) => admin.getRules(request.params.id, request.params.channel),
    );

    app.put(
      '/v1/admin/tenants/:id/risk/:action',
      {
        schema: adminSchema(
          "Replace an action's risk rule set (live within a second everywhere); GET's answer can be PUT back",
          { params: RiskActionParam, body: RiskRuleSetBody },
          { 200: RiskRuleSetView },
        ),
      },
      async (request) => {
        const { action, rules } = request.body;
        if (action !== undefined && action !== request.params.action) {
          throw new SluiceError('INVALID_REQUEST', `the body's action (${action}) is not the path's (${request.params.action})`, {
            details: { field: 'action' },
          });
        }
        return admin.setRiskRules(request.params.id, request.params.action, rules);
      },
    );
    app.get(
      '/v1/admin/tenants/:id/risk/:action',
      { schema: adminSchema("An action's risk rule set, in the shape PUT takes", { params: RiskActionParam }, { 200: RiskRuleSetView }) },
      async (request) => admin.getRiskRules(request.params.id, request.params.action),
    );

    // A tenant's blacklist and the global one (every tenant): the same bodies and answers.
    const blacklistRoutes = (url: string, scopeOf: (params: { id?: string }) => BlacklistScope, whose: string, params?: typeof IdParam) => {
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
          return admin.addToBlacklist(scopeOf(request.params as { id?: string }), channel, recipients, reason);
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
          return admin.removeFromBlacklist(scopeOf(request.params as { id?: string }), channel, recipients);
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
          return admin.listBlacklist(scopeOf(request.params as { id?: string }), {
            ...(channel === undefined ? {} : { channel }),
            ...(limit === undefined ? {} : { limit: Number(limit) }),
            ...(after === undefined ? {} : { after }),
          });
        },
      );
    };
    blacklistRoutes('/v1/admin/tenants/:id/blacklist', (params) => ({ tenant: params.id! }), "a tenant's", IdParam);
    blacklistRoutes('/v1/admin/blacklist', () => 'global', 'global: every tenant');

    app.delete(
      '/v1/admin/tenants/:id/bans/:channel/:to',
      { schema: adminSchema("Lift a recipient's ban", { params: BanParams, querystring: LiftBanQuery }, { 200: BanLifted }) },
      async (request) => {
        const lifted = await admin.liftBan(request.params.id, request.params.channel, request.params.to, {
          resetCounts: request.query.resetCounts === 'true',
        });
        return { lifted };
      },
    );

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
        return reply.status(201).send(await admin.createProvider(body));
      },
    );
    app.get(
      '/v1/admin/providers',
      { schema: adminSchema('List providers', { querystring: ProviderQuery }, { 200: ProviderList }) },
      async (request) => ({
        providers: await admin.listProviders(request.query),
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
        const updated = await admin.updateProvider(request.params.id, request.body);
        if (!updated) throw new SluiceError('NOT_FOUND', 'no such provider');
        return updated;
      },
    );
    app.delete(
      '/v1/admin/providers/:id',
      { schema: adminSchema('Remove a provider', { params: IdParam }, { 200: ProviderDeleted }) },
      async (request) => {
        if (!(await admin.deleteProvider(request.params.id))) throw new SluiceError('NOT_FOUND', 'no such provider');
        return { deleted: true as const };
      },
    );
  };

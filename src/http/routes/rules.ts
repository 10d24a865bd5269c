/** A tenant channel's frequency rules and an action's risk rule set, behind SLUICE_ADMIN_TOKEN. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChannelParam } from '../../api/common.js';
import { RiskActionParam, RiskRuleSetBody, RiskRuleSetView } from '../../api/risk.js';
import { RuleSetBody, RuleSetView } from '../../api/rules.js';
import { SluiceError } from '../../core/errors.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const ruleRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Every route of this plugin (the hook is encapsulated to it), whatever spelling of the path
    // matched it: the router decodes `/v1/%61dmin/…`, so a test of the raw URL is no guard.
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
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
        return deps.rules.setRules(
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
      async (request) => deps.rules.getRules(request.params.id, request.params.channel),
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
        return deps.rules.setRiskRules(request.params.id, request.params.action, rules);
      },
    );
    app.get(
      '/v1/admin/tenants/:id/risk/:action',
      { schema: adminSchema("An action's risk rule set, in the shape PUT takes", { params: RiskActionParam }, { 200: RiskRuleSetView }) },
      async (request) => deps.rules.getRiskRules(request.params.id, request.params.action),
    );
  };

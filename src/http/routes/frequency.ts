import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../api/errors.js';
import { Decision, FrequencyCheckBody } from '../../api/frequency.js';
import { SECURITY } from '../../api/operations.js';
import { authenticateTenant, tenantOf } from '../auth.js';
import type { HttpDeps } from '../deps.js';

/**
 * The risk-control API: "has this user done X more than M times in the last N minutes?". The answer
 * is data (200, `allowed` true or false), not a 429: the caller asked a question, it was answered.
 */
export const frequencyRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', authenticateTenant(deps));

    app.post(
      '/v1/frequency/check',
      {
        schema: {
          summary: 'Frequency decision on a tenant-scoped subject and action: a denial is 200 with allowed false, not a 429',
          security: SECURITY.tenant,
          body: FrequencyCheckBody,
          response: { ...errorResponses(400, 401, 403, 413, 415, 429), 200: Decision },
        },
      },
      async (request) => {
        const tenant = tenantOf(request);
        const body = request.body;
        return deps.frequencyChecks.check(tenant.id, {
          subject: body.subject,
          action: body.action,
          rules: body.rules.map((rule) => ({
            windowMs: rule.windowSeconds * 1000,
            limit: rule.limit,
            banMs: (rule.banSeconds ?? 0) * 1000,
            ...(rule.algorithm ? { algorithm: rule.algorithm } : {}),
          })),
          requestId: body.requestId,
          record: body.record ?? true,
        });
      },
    );
  };

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../api/errors.js';
import { SECURITY } from '../../api/operations.js';
import { RiskCheckBody, RiskDecisionView, RiskEventBody, RiskEventRecorded } from '../../api/risk.js';
import { authenticateTenant, tenantOf } from '../auth.js';
import type { HttpDeps } from '../deps.js';

/**
 * Risk control on stored rule sets: `check` judges one event by its action's rules (a denial is
 * 200 with `decision: deny`, as the frequency check answers); `events` records an outcome.
 */
export const riskRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', authenticateTenant(deps));

    app.post(
      '/v1/risk/check',
      {
        schema: {
          summary: "Judge one event by its action's stored risk rules: allow, review or deny (a denial is 200, not a 429)",
          security: SECURITY.tenant,
          body: RiskCheckBody,
          response: { ...errorResponses(400, 401, 403, 404, 413, 415, 429), 200: RiskDecisionView },
        },
      },
      async (request) => {
        const body = request.body;
        return deps.riskEvents.check(tenantOf(request).id, {
          action: body.action,
          dimensions: body.dimensions,
          ...(body.requestId ? { requestId: body.requestId } : {}),
          record: body.record ?? true,
        });
      },
    );

    app.post(
      '/v1/risk/events',
      {
        schema: {
          summary:
            "Record an event's outcome (last-n rules) and values (distinct, seen) without a decision, in each rule whose dimensions it carries; the others are named in skipped, and 400 when it feeds none",
          security: SECURITY.tenant,
          body: RiskEventBody,
          response: {
            ...errorResponses(400, 401, 403, 404, 413, 415, 429),
            202: RiskEventRecorded,
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const result = await deps.riskEvents.recordEvent(tenantOf(request).id, {
          action: body.action,
          dimensions: body.dimensions,
          outcome: body.outcome,
          ...(body.requestId ? { requestId: body.requestId } : {}),
        });
        return reply.code(202).send({ recorded: result.duplicate !== true, ...result });
      },
    );
  };

import type { FastifyPluginAsync } from 'fastify';
import { errorResponses } from '../../api/errors.js';
import { Liveness, NotReady, Readiness } from '../../api/health.js';
import { SECURITY } from '../../api/operations.js';
import type { HttpDeps } from '../deps.js';

export const healthRoutes =
  (deps: HttpDeps): FastifyPluginAsync =>
  async (app) => {
    app.get(
      '/healthz',
      {
        schema: { summary: 'Liveness: the process answers', security: SECURITY.none, response: { ...errorResponses(400), 200: Liveness } },
      },
      async () => ({ status: 'ok' }),
    );
    app.get(
      '/readyz',
      {
        schema: {
          summary: 'Readiness: database, Redis, migrations, breaker',
          security: SECURITY.none,
          response: {
            ...errorResponses(400),
            200: Readiness,
            503: NotReady,
          },
        },
      },
      async (_request, reply) => {
        const readiness = await deps.health.ready();
        return reply
          .status(readiness.ready ? 200 : 503)
          .send({ status: readiness.ready ? 'ready' : 'not-ready', checks: readiness.checks });
      },
    );
    if (deps.metrics) {
      const metrics = deps.metrics;
      app.get(
        '/metrics',
        {
          schema: {
            summary: 'Prometheus metrics (text exposition format)',
            security: SECURITY.none,
            produces: ['text/plain'],
            response: {
              ...errorResponses(400),
              200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
            },
          },
        },
        async (_request, reply) => {
          return reply.header('Content-Type', metrics.contentType).send(await metrics.render());
        },
      );
    }
  };

import type { FastifyPluginAsync } from 'fastify';
import type { HttpDeps } from '../../app/contracts.js';

export const healthRoutes =
  (deps: HttpDeps): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { summary: 'Liveness: the process answers' } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { summary: 'Readiness: database, Redis, migrations, breaker' } }, async (_request, reply) => {
      const readiness = await deps.health.ready();
      return reply.status(readiness.ready ? 200 : 503).send({ status: readiness.ready ? 'ready' : 'not-ready', checks: readiness.checks });
    });
    if (deps.metrics) {
      const metrics = deps.metrics;
      app.get('/metrics', { schema: { summary: 'Prometheus metrics', hide: true } }, async (_request, reply) => {
        return reply.header('Content-Type', metrics.contentType).send(await metrics.render());
      });
    }
  };

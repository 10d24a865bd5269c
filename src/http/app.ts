/**
 * The HTTP API of DESIGN.md §8: Fastify with TypeBox schemas, one plugin per route group, one error
 * handler. Built from {@link HttpDeps} so tests drive it through `app.inject()` with real services.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { HttpDeps } from '../app/contracts.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { adminRoutes } from './routes/admin.js';
import { frequencyRoutes } from './routes/frequency.js';
import { healthRoutes } from './routes/health.js';
import { messageRoutes } from './routes/messages.js';

export async function buildHttpApp(deps: HttpDeps): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: deps.bodyLimitBytes,
    logger: {
      level: deps.logLevel ?? 'info',
      // Keys and tokens never reach the log.
      redact: ['req.headers.authorization', 'req.headers["idempotency-key"]'],
    },
    ajv: {
      customOptions: {
        // Unknown fields are an error the caller should see, not something to drop silently.
        removeAdditional: false,
        coerceTypes: false,
        allErrors: false,
      },
    },
    // Two lines per request at `info` would be thousands a second under load, and writing them
    // costs more than the request; the HTTP histogram counts every request, 5xx are logged.
    logController: new LogController({ disableRequestLogging: deps.logLevel !== 'debug' && deps.logLevel !== 'trace' }),
    return503OnClosing: true,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // The API speaks JSON only: a text/plain body is 415, not a string that fails the schema.
  app.removeContentTypeParser('text/plain');
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  await app.register(swagger, {
    openapi: {
      info: { title: 'sluice', version: '0.1.0', description: 'Message service with exact frequency control' },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Tenant API key, or the admin token for /v1/admin' } },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  if (deps.metrics?.observeHttp) {
    const observe = deps.metrics.observeHttp.bind(deps.metrics);
    app.addHook('onResponse', async (request, reply) => {
      observe(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    });
  }

  await app.register(healthRoutes(deps));
  await app.register(messageRoutes(deps));
  await app.register(frequencyRoutes(deps));
  await app.register(adminRoutes(deps));
  return app;
}

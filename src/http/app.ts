/**
 * The HTTP API of DESIGN.md §8: Fastify with TypeBox schemas, one plugin per route group, one error
 * handler. Built from {@link HttpDeps} so tests drive it through `app.inject()` with real services.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { TAGS } from '../api/operations.js';
import { SluiceError } from '../core/errors.js';
import { hasControlCharacter, nulField } from '../core/text.js';
import { errorSerializer, REDACTED_PATHS, requestSerializer } from '../infra/logging.js';
import { consoleRoutes, DEFAULT_CONSOLE_DIR } from './console.js';
import type { HttpDeps } from './deps.js';
import { clientErrorHandler, errorHandler, MAX_PARAM_LENGTH, notFoundHandler, schemaErrorFormatter } from './error-handler.js';
import { nameOperation } from './openapi.js';
import { lazyRequestLogger } from './request-logger.js';
import type { RequestsInProgress } from './requests-in-progress.js';
import { adminLookupRoutes } from './routes/admin-lookups.js';
import { banRoutes } from './routes/bans.js';
import { batchRoutes } from './routes/batch.js';
import { blacklistRoutes } from './routes/blacklists.js';
import { fraudRoutes } from './routes/fraud.js';
import { frequencyRoutes } from './routes/frequency.js';
import { healthRoutes } from './routes/health.js';
import { messageRoutes } from './routes/messages.js';
import { providerRoutes } from './routes/providers.js';
import { receiptRoutes } from './routes/receipts.js';
import { riskRoutes } from './routes/risk.js';
import { ruleRoutes } from './routes/rules.js';
import { adminSuppressionRoutes, suppressionRoutes } from './routes/suppressions.js';
import { templateRoutes } from './routes/templates.js';
import { tenantRoutes } from './routes/tenants.js';
import { webhookRoutes } from './routes/webhooks.js';

/** A caller's `X-Request-Id` taken as the request's id: 1 to 128 of letters, digits and `._:-`. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function requestId(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : crypto.randomUUID();
}

/** Why a JSON body the parser refused is refused. */
function invalidJson(text: string): SluiceError {
  try {
    JSON.parse(text);
  } catch (error) {
    return new SluiceError('INVALID_REQUEST', `the body is not valid JSON: ${(error as Error).message}`);
  }
  return new SluiceError(
    'INVALID_REQUEST',
    'the body has a "__proto__" or "constructor": {"prototype": …} key: such keys are refused, as they could change what objects inherit',
  );
}

/** INVALID_REQUEST naming the first parameter of `values` (a string or, repeated in a query, strings) with a control character. */
function refuseNul(body: unknown): void {
  const field = nulField(body);
  if (field === undefined) return;
  const shown = field.slice(0, 128);
  throw new SluiceError('INVALID_REQUEST', `${shown || 'the body'}: NUL (U+0000) is not allowed in text`, {
    details: { field: shown },
  });
}

function refuseControlCharacters(kind: string, values: unknown): void {
  if (values === null || typeof values !== 'object') return;
  for (const [name, value] of Object.entries(values)) {
    const texts = Array.isArray(value) ? value : [value];
    if (texts.some((text) => typeof text === 'string' && hasControlCharacter(text))) {
      throw new SluiceError(
        'INVALID_REQUEST',
        `${kind} ${name.slice(0, 64)}: control characters (U+0000 to U+001F, U+007F) are not allowed`,
        {
          details: { field: name.slice(0, 64) },
        },
      );
    }
  }
}

/**
 * Caps the sockets `server` holds: `max` in all (Node closes one over it as it is accepted, and
 * says so with `drop`) and, unless 0, `perAddress` from one remote address. Node and Fastify have
 * no per-address cap; this one is a map of counts, updated on accept and close. `refused` counts
 * each closed one by its cap.
 */
function limitConnections(server: Server, max: number, perAddress: number, refused?: (cap: 'max' | 'per_ip') => void): void {
  server.maxConnections = max;
  if (refused) server.on('drop', () => refused('max'));
  if (perAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > perAddress) {
      socket.destroy();
      refused?.('per_ip');
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** How the API's request schemas are validated (Fastify's ajv); the CLI checks its bodies with the same settings. */
export const API_AJV_OPTIONS = {
  customOptions: {
    // Unknown fields are an error the caller should see, not something to drop silently.
    removeAdditional: false,
    coerceTypes: false,
    allErrors: false,
  },
} satisfies FastifyServerOptions['ajv'];

export interface HttpAppOptions {
  /**
   * `all` (default): the whole API. `operations`: only `/healthz`, `/readyz` and `/metrics`, for an
   * instance that runs dispatchers and serves no API (`SLUICE_ROLES=worker`), so it can still be
   * probed and scraped: the delivery metrics exist only on workers.
   */
  routes?: 'all' | 'operations';
  /** Where the built console is (default `dist/console/`, beside the compiled server); served when `deps.console` is not false. */
  consoleDir?: string;
  /** Tracks the requests in progress, for a shutdown that waits for their handlers (`main/api.ts`). */
  inProgress?: RequestsInProgress;
}

export async function buildHttpApp(deps: HttpDeps, options: HttpAppOptions = {}): Promise<FastifyInstance> {
  const operationsOnly = options.routes === 'operations';
  const requestTimeout = deps.requestTimeoutMs;
  const app = Fastify({
    bodyLimit: deps.bodyLimitBytes,
    // Fastify's default (0) would leave a trickling client's connection open for good. Node takes
    // the bound only when the server is made (Fastify also sets it later, which Node ignores), and
    // looks for overdue requests every `connectionsCheckingInterval` (30 s by default): every second.
    requestTimeout,
    http: { requestTimeout, connectionsCheckingInterval: 1000 },
    // `request.ip`, the address wrong credentials count under: the proxy's unless it is trusted.
    trustProxy: deps.trustProxy ?? false,
    // Keys, tokens and recipients never reach the log (src/infra/logging.ts). The process's logger
    // when given, so that Fastify's lines ("Server listening") have its format, not raw JSON.
    ...(deps.logger
      ? {
          loggerInstance: deps.logger.child(
            {},
            { level: deps.logLevel ?? deps.logger.level, serializers: { req: requestSerializer } },
          ) as FastifyBaseLogger,
        }
      : {
          logger: {
            level: deps.logLevel ?? 'info',
            redact: REDACTED_PATHS,
            serializers: { err: errorSerializer, req: requestSerializer },
          },
        }),
    // A request's child logger is built at its first line: most requests write none.
    childLoggerFactory: lazyRequestLogger,
    ajv: API_AJV_OPTIONS,
    // Two lines per request at `info` would be thousands a second under load, and writing them
    // costs more than the request; the HTTP histogram counts every request, 5xx are logged.
    logController: new LogController({ disableRequestLogging: deps.logLevel !== 'debug' && deps.logLevel !== 'trace' }),
    // Errors Fastify answers itself, before a route's error handler could see them, would have
    // Fastify's body ({"error": "Bad Request", "code": "FST_ERR_…"}), not the contract's: the router's
    // (a malformed percent-escape, an over-long path parameter) go through our handler, an
    // unparsable request gets our body from `clientErrorHandler`, and a request arriving while the
    // server closes is answered below rather than by `return503OnClosing`.
    frameworkErrors: errorHandler,
    schemaErrorFormatter,
    clientErrorHandler,
    return503OnClosing: false,
    // The default (100) refused a ban's recipient longer than that (a webhook URL) with a 414;
    // the route schemas hold each parameter to its own length.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The caller's X-Request-Id goes into logs and 5xx bodies: only in a bounded, plain format
    // (REQUEST_ID), else the request gets an id of its own.
    requestIdHeader: false,
    genReqId: requestId,
  }).withTypeProvider<TypeBoxTypeProvider>();

  limitConnections(app.server, deps.maxConnections, deps.maxConnectionsPerIp, deps.metrics?.observeConnectionRefused?.bind(deps.metrics));
  // First of the hooks: a request refused by any later one is tracked (and ended) too.
  options.inProgress?.register(app);

  // Requests already on a kept-alive connection when the server starts closing: 503 in the
  // contract's shape (Fastify also answers them with `Connection: close`). Expected in every
  // deploy, so said once at warn and counted at the end, not an error line with a stack each.
  let closing = false;
  let refusedWhileClosing = 0;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async () => {
    if (!closing) return;
    if (refusedWhileClosing++ === 0)
      app.log.warn('shutting down: requests still arriving are answered 503 UNAVAILABLE, for their clients to retry on another instance');
    throw new SluiceError('UNAVAILABLE', 'this instance is shutting down; retry (another instance will answer)');
  });
  app.addHook('onClose', async () => {
    if (refusedWhileClosing > 0)
      app.log.info({ refused: refusedWhileClosing }, `answered ${refusedWhileClosing} request(s) 503 while shutting down`);
  });

  // The API speaks JSON only: a text/plain body is 415, not a string that fails the schema.
  app.removeContentTypeParser('text/plain');
  // Fastify's JSON parser (secure-json-parse: `__proto__` and `constructor.prototype` keys are
  // refused) says only "Body is not valid JSON": ours says why, for a syntax error and for a key
  // refused. The text is parsed again only on that error path. The bytes are decoded strictly, in
  // the one pass that makes the string: bytes that are not UTF-8 are refused, not stored as U+FFFD.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, bytes, done) => {
    // Many clients send `Content-Type: application/json` on every call, a DELETE without a body
    // included: no body is no body. A route that needs one says so through its schema.
    if ((bytes as Buffer).length === 0) {
      done(null, undefined);
      return;
    }
    let body: string;
    try {
      body = utf8.decode(bytes as Buffer);
    } catch {
      done(new SluiceError('INVALID_REQUEST', 'the body is not valid UTF-8'), undefined);
      return;
    }
    parseJson(request, body, (error, value) => {
      if ((error as { code?: string } | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY') done(invalidJson(body), undefined);
      else done(error, value);
    });
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  // Every route's path and query parameters, before its schema and handler (after authentication,
  // so the admin API stays 404 while off): an id, channel, recipient or cursor never holds a control
  // character, and PostgreSQL refuses NUL in text outright (a 503 from deep in a query otherwise).
  // In a body, any string or key: NUL has no use in any field (a message body may hold a newline).
  app.addHook('preValidation', async (request) => {
    refuseControlCharacters('path parameter', request.params);
    refuseControlCharacters('query parameter', request.query);
    refuseNul(request.body);
  });

  if (operationsOnly) {
    await app.register(healthRoutes(deps));
    return app;
  }

  await app.register(swagger, {
    // 3.1: its JSON Schema takes what the request schemas say (propertyNames, null types).
    transform: nameOperation,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'sluice',
        version: '0.1.0',
        description: 'Message service with exact frequency control',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/', description: 'this server' }],
      tags: TAGS.map((tag) => ({ ...tag })),
      // No global `security`: each operation names its own (none for health, readiness and metrics).
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: "A tenant's API key: Authorization: Bearer sk_…" },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (SLUICE_ADMIN_TOKEN): Authorization: Bearer …' },
          receiptToken: {
            type: 'apiKey',
            in: 'query',
            name: 'token',
            description: "A provider's receipt token (POST /v1/admin/providers/:id/receipt-token), or the Sluice-Receipt-Token header",
          },
        },
      },
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
  await app.register(riskRoutes(deps));
  // The admin API, one plugin per aggregate; registered in this order, /docs lists them so.
  await app.register(tenantRoutes(deps));
  await app.register(ruleRoutes(deps));
  await app.register(blacklistRoutes(deps));
  await app.register(banRoutes(deps));
  await app.register(providerRoutes(deps));
  await app.register(adminLookupRoutes(deps));
  await app.register(batchRoutes(deps));
  await app.register(templateRoutes(deps));
  await app.register(webhookRoutes(deps));
  await app.register(fraudRoutes(deps));
  await app.register(receiptRoutes(deps));
  await app.register(suppressionRoutes(deps));
  await app.register(adminSuppressionRoutes(deps));
  if (deps.console !== false) await app.register(consoleRoutes(options.consoleDir ?? DEFAULT_CONSOLE_DIR));
  return app;
}

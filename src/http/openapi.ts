/**
 * @fastify/swagger's `transform`: each documented operation named from the operation table
 * (`api/operations.ts`), and a route's `documentedBody` shown in place of its body schema.
 */
import { OPERATIONS } from '../api/operations.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * For a route whose body schema checks less than the body must be (the batch route validates
     * its envelope whole and each message on its own): the body schema /docs shows.
     */
    documentedBody?: object;
  }
}

/**
 * @fastify/swagger's `transform`: names each documented operation from {@link OPERATIONS}. A route
 * missing from the table keeps no id (the OpenAPI test names it). A route's `documentedBody`
 * (its `config`) replaces its body schema in the document.
 */
export function nameOperation<S extends object>(input: {
  schema: S;
  url: string;
  route: { method: string | string[]; config?: unknown };
}): { schema: S; url: string } {
  const method = Array.isArray(input.route.method) ? input.route.method[0]! : input.route.method;
  const named = OPERATIONS[`${method} ${input.url}`];
  const documented = (input.route.config as { documentedBody?: object } | undefined)?.documentedBody;
  let schema = documented ? { ...input.schema, body: documented } : input.schema;
  if (named) schema = { ...schema, operationId: named.operationId, tags: [named.tag] };
  return { schema, url: input.url };
}

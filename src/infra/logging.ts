/**
 * What every sluice logger shares (the runtime's, the CLI's and the HTTP app's): the redaction of
 * secrets and the serializers that keep them out of error and request lines.
 *
 * - `err`: pino's standard error serializer, minus the arguments of a Redis command. ioredis puts
 *   the failed command on its errors (`command: {name, args}`), and for `AUTH` the argument is
 *   the Redis password; for other commands it is key names and script arguments. The command's
 *   name stays: it is what tells an operator which call failed.
 * - `err`, too: the statement and values that database drivers put on their errors (mysql2's
 *   `sql` and `sqlMessage`, pg's `detail` and `parameters`): they hold recipients, bodies and keys.
 * - `req`: the route's pattern (`/v1/admin/tenants/:id/bans/:channel/:to`), not the URL, which
 *   may carry a recipient (a ban's `:to`) or a paging cursor.
 */
import pino, { type Logger, type LoggerOptions, type SerializerFn } from 'pino';
import pretty from 'pino-pretty';

/** Fields that never reach a log line, wherever they appear one level down. */
export const REDACTED_PATHS = ['apiKey', 'secret', 'password', '*.apiKey', '*.secret', '*.password'];

type Serialized = Record<string, unknown>;

/** How deep causes and aggregated errors are followed; a cycle or a long chain stops there. */
const MAX_DEPTH = 4;

/** Error fields of database drivers that quote the data: dropped from log lines. */
const DATA_FIELDS = new Set(['sql', 'sqlMessage', 'parameters', 'detail', 'internalQuery', 'values']);

function withoutSecrets(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item, depth + 1));
  // Anywhere in the tree: pino keeps the raw `errors` of an AggregateError beside `aggregateErrors`.
  const copy: Serialized = {};
  const source = value as Serialized;
  // A database driver's message itself may quote a value ("Duplicate entry '+86…' for key …"):
  // its code says what failed, and the stack keeps where, without the first line.
  const fromDriver = 'sqlState' in source || 'sqlMessage' in source || ('severity' in source && 'routine' in source);
  for (const [key, field] of Object.entries(value as Serialized)) {
    if (DATA_FIELDS.has(key)) continue;
    if (fromDriver && key === 'message') {
      copy.message = `database error ${String(source.code ?? '')}`.trim();
      continue;
    }
    if (fromDriver && key === 'stack' && typeof field === 'string') {
      copy.stack = field.replace(/^[^\n]*/, `database error ${String(source.code ?? '')}`.trim());
      continue;
    }
    copy[key] =
      key === 'command' && field !== null && typeof field === 'object'
        ? { name: (field as { name?: unknown }).name }
        : withoutSecrets(field, depth + 1);
  }
  return copy;
}

/** pino's `err` serializer without Redis command arguments (a password for `AUTH`) or a driver's quoted data. */
export const errorSerializer: SerializerFn = (error) => withoutSecrets(pino.stdSerializers.err(error), 0);

/** A request by its method and route pattern: the URL itself may name a recipient. */
export const requestSerializer: SerializerFn = (request: { id?: unknown; method?: string; routeOptions?: { url?: string } }) => ({
  id: request.id,
  method: request.method,
  route: request.routeOptions?.url ?? '(no route)',
});

/** The options of a sluice logger at `level`. */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: REDACTED_PATHS, serializers: { err: errorSerializer } };
}

/**
 * A sluice logger on standard output: JSON for collectors, or readable lines for a person
 * (`pretty`; `auto` when standard output is a terminal). Pretty lines are formatted in process,
 * synchronously: no worker thread, nothing lost at exit.
 */
export function createLogger(
  level: string,
  format: string,
  output: { isTerminal?: boolean; destination?: NodeJS.WritableStream } = {},
): Logger {
  const isTerminal = output.isTerminal ?? process.stdout.isTTY === true;
  const destination = output.destination ?? process.stdout;
  if (format === 'pretty' || (format === 'auto' && isTerminal)) {
    return pino(
      loggerOptions(level),
      pretty({ colorize: isTerminal, sync: true, destination, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
    );
  }
  return output.destination ? pino(loggerOptions(level), output.destination) : pino(loggerOptions(level));
}

/**
 * A dependency being away (Redis down or frozen, a database refusing connections) is an expected
 * condition: sluice retries, falls back or waits, and an operator learns it from one warning in
 * sluice's words, not from an error line per attempt quoting a driver ("Reached the max retries per
 * request limit (which is 1). Refer to "maxRetriesPerRequest" option for details."). Anything else
 * thrown is a failure an operator must look at, logged as an error with its stack.
 */

/** Socket errors that mean "the other side is not there (now)", as Node names them. */
const UNREACHABLE_CODES: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ECONNRESET: 'reset the connection',
  ETIMEDOUT: 'did not answer in time',
  EHOSTUNREACH: 'is unreachable (no route to the host)',
  ENETUNREACH: 'is unreachable (no route to the network)',
  ENOTFOUND: 'has a name that does not resolve',
  EAI_AGAIN: 'has a name that does not resolve (DNS did not answer)',
  EPIPE: 'closed the connection',
};

/** What the error says, as ioredis, pg and mysql2 word the outages they see. */
function driverOutage(error: Error & { code?: unknown }): string | undefined {
  switch (error.name) {
    case 'MaxRetriesPerRequestError':
      return 'Redis did not answer (sluice keeps reconnecting)';
    case 'ClusterAllFailedError':
      return 'no node of the Redis Cluster answers (sluice keeps reconnecting)';
  }
  const { message } = error;
  if (message === 'Connection is closed.' || message.startsWith('Stream isn'))
    return 'the connection to Redis is closed (sluice keeps reconnecting)';
  if (message === 'Command timed out') return 'Redis did not answer within SLUICE_REDIS_COMMAND_TIMEOUT_MS';
  if (message.startsWith('CLUSTERDOWN')) return 'the Redis Cluster is down (CLUSTERDOWN)';
  if (message.startsWith('LOADING')) return 'Redis is loading its data set';
  if (/^Connection terminated/.test(message)) return 'the connection to PostgreSQL ended';
  if (error.code === '57P01' || error.code === '57P03') return 'PostgreSQL is shutting down or starting';
  if (error.code === 'PROTOCOL_CONNECTION_LOST') return 'the connection to MySQL/MariaDB ended';
  return undefined;
}

/**
 * Sluice's words for an error that means a dependency is away (e.g. `Redis did not answer (sluice
 * keeps reconnecting)`, `127.0.0.1:5432 refused the connection`), or undefined for any other error.
 * Follows `cause` and AggregateError's `errors` (a connection tried on IPv4 and IPv6).
 */
export function outageReason(error: unknown, depth = 0): string | undefined {
  if (!(error instanceof Error) || depth > 4) return undefined;
  const coded = error as Error & { code?: unknown; address?: unknown; port?: unknown };
  if (typeof coded.code === 'string' && coded.code in UNREACHABLE_CODES) {
    const where =
      typeof coded.address === 'string' ? `${coded.address}${coded.port === undefined ? '' : `:${String(coded.port)}`}` : 'a server';
    return `${where} ${UNREACHABLE_CODES[coded.code]}`;
  }
  const reason = driverOutage(coded);
  if (reason !== undefined) return reason;
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const found = outageReason(inner, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return outageReason(error.cause, depth + 1);
}

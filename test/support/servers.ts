/**
 * Where the integration tests find their servers. `scripts/test-servers.sh start DIR` starts them
 * and writes the variables read here. Without a server a suite skips, loudly; with CI=true a
 * missing server fails the run instead, so CI can never pass by skipping.
 */
import { describe } from 'vitest';

export interface TestServers {
  /** `redis://127.0.0.1:PORT` of a standalone Redis. */
  redisUrl?: string;
  /** `host:port` of each master of a 3-master Redis Cluster. */
  redisCluster?: { host: string; port: number }[];
  pgUrl?: string;
  mysqlUrl?: string;
  /** `nats://127.0.0.1:PORT` of a nats-server with JetStream. */
  natsUrl?: string;
}

export const servers: TestServers = {
  redisUrl: process.env.SLUICE_TEST_REDIS_URL || undefined,
  redisCluster: process.env.SLUICE_TEST_REDIS_CLUSTER
    ? process.env.SLUICE_TEST_REDIS_CLUSTER.split(',').map((hostPort) => {
        const [host, port] = hostPort.split(':');
        return { host: host ?? '127.0.0.1', port: Number(port) };
      })
    : undefined,
  pgUrl: process.env.SLUICE_TEST_PG_URL || undefined,
  mysqlUrl: process.env.SLUICE_TEST_MYSQL_URL || undefined,
  natsUrl: process.env.SLUICE_TEST_NATS_URL || undefined,
};

const inCI = process.env.CI === 'true';
const warned = new Set<string>();

/**
 * `describe` when `available`; otherwise a skipped suite and a warning, or, in CI, a failure.
 * Usage: `describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'RedisStore', () => { ... })`.
 */
export function describeWith(available: unknown, variable: string, name: string, body: () => void): void {
  if (available) {
    describe(name, body);
    return;
  }
  if (inCI) throw new Error(`${variable} is not set: CI must run "${name}" against a real server (see scripts/test-servers.sh)`);
  if (!warned.has(variable)) {
    warned.add(variable);
    console.warn(`\n*** SKIPPING tests that need ${variable} (start servers with scripts/test-servers.sh) ***\n`);
  }
  describe.skip(name, body);
}

/**
 * Vitest global setup: `npm test` starts throwaway servers itself. When no SLUICE_TEST_* server is
 * given (a developer's plain `npm test`), scripts/test-servers.sh starts whatever is installed —
 * Redis and a 3-master cluster, PostgreSQL 15, MariaDB, nats-server with JetStream — on free loopback ports in a temp folder,
 * and the variables it writes reach every test worker; teardown stops them and removes the
 * folder. Servers given by the environment (.ci/run, or a developer's own) are used as they are.
 * SLUICE_TEST_SERVERS=none skips the start (the suites needing servers then skip, or fail in CI).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER_VARIABLES = [
  'SLUICE_TEST_REDIS_URL',
  'SLUICE_TEST_REDIS_CLUSTER',
  'SLUICE_TEST_PG_URL',
  'SLUICE_TEST_MYSQL_URL',
  'SLUICE_TEST_NATS_URL',
];
const script = fileURLToPath(new URL('../../scripts/test-servers.sh', import.meta.url));

/** `export NAME=value` lines of the env file test-servers.sh writes. */
export function parseServerEnv(text: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^export ([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match) variables[match[1]!] = match[2]!;
  }
  return variables;
}

export default function setup(): (() => void) | undefined {
  if (process.env.SLUICE_TEST_SERVERS === 'none') return undefined;
  if (SERVER_VARIABLES.some((name) => process.env[name])) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-test-servers-'));
  const stop = () => {
    try {
      execFileSync('bash', [script, 'stop', dir], { stdio: 'ignore' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    execFileSync('bash', [script, 'start', dir], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
  } catch (error) {
    stop();
    throw new Error(
      `scripts/test-servers.sh could not start the test servers (SLUICE_TEST_SERVERS=none runs without them): ${String(error)}`,
    );
  }
  const variables = parseServerEnv(readFileSync(join(dir, 'env'), 'utf8'));
  Object.assign(process.env, variables);
  const started = Object.keys(variables).filter((name) => SERVER_VARIABLES.includes(name));
  console.log(`test servers started for this run: ${started.join(', ') || 'none installed'}`);
  return stop;
}

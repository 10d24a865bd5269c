/**
 * Shared pieces of the delivery integration tests: a webhook stub (a real node:http server on
 * 127.0.0.1 recording what arrives and failing on demand), a runtime on a temporary SQLite file,
 * and small helpers to wait for and read message outcomes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { ProviderDirectoryDeps } from '../../src/delivery/provider-directory.js';
import { createRuntime, type Runtime } from '../../src/main/runtime.js';
import { createConsoleProvider } from '../../src/providers/console.js';
import { loadSettings } from '../../src/settings/settings.js';
import type { Message } from '../../src/storage/repositories/messages.js';
import { sleep, until } from '../support/wait.js';

/** What the stub answers for one request: 200, 503 (retryable), 400 (permanent) or 401 (the provider refused itself). */
export type StubAnswer = 200 | 503 | 400 | 401;

export interface WebhookStub {
  readonly url: string;
  /** Arrival times (epoch ms) of each message id, one per request that reached the stub. */
  readonly arrivals: Map<string, number[]>;
  /** Answer for the next request of this path; default 200. */
  answer: (id: string, path: string) => StubAnswer;
  /** Requests answered 2xx, per message id. */
  readonly accepted: Map<string, number>;
  close(): Promise<void>;
}

export async function startWebhookStub(): Promise<WebhookStub> {
  const arrivals = new Map<string, number[]>();
  const accepted = new Map<string, number>();
  const stub = {
    url: '',
    arrivals,
    accepted,
    answer: (_id: string, _path: string): StubAnswer => 200,
    close: async () => {},
  };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const id = String(request.headers['x-sluice-message-id'] ?? '');
      const list = arrivals.get(id) ?? [];
      list.push(Date.now());
      arrivals.set(id, list);
      const status = stub.answer(id, request.url ?? '/');
      if (status === 200) accepted.set(id, (accepted.get(id) ?? 0) + 1);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(status === 200 ? JSON.stringify({ id: `stub-${id}` }) : JSON.stringify({ error: `stub says ${status}` }));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  stub.url = `http://127.0.0.1:${port}`;
  stub.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return stub;
}

/** A fresh temporary directory (SQLite file, secret key), removed by `cleanup`. */
export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-delivery-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The env of a fast test instance (poll 100 ms, retries 20..200 ms). */
export function testEnv(dir: string, redisUrl?: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SLUICE_DB_URL: `sqlite:${join(dir, 'sluice.db')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
    SLUICE_POLL_MS: '100',
    SLUICE_RETRY_BASE_MS: '20',
    SLUICE_RETRY_MAX_MS: '200',
    SLUICE_MAX_ATTEMPTS: '10',
    ...(redisUrl ? { SLUICE_REDIS_URL: redisUrl } : {}),
    ...extra,
  };
}

export async function testRuntime(env: Record<string, string>): Promise<Runtime> {
  return createRuntime(loadSettings(env, undefined));
}

/** What a provider directory needs, taken from a runtime as the worker role takes it. */
export function directoryDeps(runtime: Runtime): ProviderDirectoryDeps {
  return { providers: runtime.repositories.providers, limiter: runtime.backend.limiter, clock: runtime.clock, logger: runtime.logger };
}

/** A console provider that prints nothing: any message reaching it is a test failure we can see. */
export function silentConsole(seen: string[] = []) {
  return createConsoleProvider({ id: 'console-fallback', channel: 'webhook', out: { write: (line: string) => void seen.push(line) } });
}

/** Registers an `http` webhook provider row pointing at `url`. */
export async function addWebhookProvider(
  runtime: Runtime,
  scope: string,
  url: string,
  options: { name?: string; priority?: number; qps?: number } = {},
): Promise<string> {
  const row = await runtime.repositories.providers.create({
    scope,
    channel: 'webhook',
    kind: 'http',
    name: options.name ?? `stub-${url}`,
    priority: options.priority ?? 100,
    qps: options.qps ?? 10_000,
    config: { url, timeoutMs: 5000 },
    secret: JSON.stringify({ signingSecret: 'test-signing-secret' }),
  });
  return row.id;
}

export { sleep };

/**
 * Whether `condition` held within `timeoutMs`: test/support/wait.ts's `until`, kept under this
 * name and shape for the files that use it (new tests call `until`, which fails naming what it awaited).
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return until(condition, { timeoutMs, intervalMs: 50 }).then(
    () => true,
    () => false,
  );
}

/** Every message of `ids`, by id. */
export async function loadMessages(runtime: Runtime, ids: readonly string[]): Promise<Map<string, Message>> {
  const result = new Map<string, Message>();
  for (const id of ids) {
    const message = await runtime.repositories.messages.get(id);
    if (message) result.set(id, message);
  }
  return result;
}

/** How many of `ids` are in a final state (sent, failed, canceled): one query per 500 ids, cheap to poll. */
export async function countFinal(runtime: Runtime, ids: readonly string[]): Promise<number> {
  let final = 0;
  for (let start = 0; start < ids.length; start += 500) {
    const row = await runtime.database.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('id', 'in', ids.slice(start, start + 500))
      .where('status', 'in', ['sent', 'failed', 'canceled'])
      .executeTakeFirst();
    final += Number(row?.count ?? 0);
  }
  return final;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** A fresh PostgreSQL database on the server of `adminUrl`; `drop()` removes it (FORCE: children may still hold connections). */
export async function createPgDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sluice_dlv_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** `testEnv` with the database URL replaced (PostgreSQL instead of the SQLite file). */
export function withDatabaseUrl(env: Record<string, string>, dbUrl: string): Record<string, string> {
  return { ...env, SLUICE_DB_URL: dbUrl };
}

/**
 * SIGTERM with a kept-alive connection, against a real `sluice serve` process on SQLite and on
 * PostgreSQL: a client
 * has a request in flight at the signal (its headers read, its body not yet sent). The answer
 * carries `Connection: close` and the server ends the connection with it; the process exits
 * within SLUICE_SHUTDOWN_TIMEOUT_MS and its last line says how long the stop took. Before, the
 * answer kept the connection alive (`Keep-Alive: timeout=72`) and the process waited for it.
 * A client that never finishes its request is closed under at the deadline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { type Backend, backends } from '../support/databases.js';
import { freePort } from '../support/net.js';
import { describeWith } from '../support/servers.js';

const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const ADMIN = 'keep-alive-admin-token-0123456789';
const TIMEOUT_MS = 4000;

interface Server {
  child: ChildProcess;
  port: number;
  lines: { msg: string; [field: string]: unknown }[];
  /** Resolves with the first log line matching, already written or to come. */
  line(test: (line: { msg: string; [field: string]: unknown }) => boolean): Promise<{ msg: string; [field: string]: unknown }>;
}

/** A socket's bytes as text, and a wait for text matching a pattern. */
function reader(socket: Socket) {
  let text = '';
  const waiters: (() => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    text: () => text,
    async until(pattern: RegExp): Promise<string> {
      while (!pattern.test(text)) await new Promise<void>((resolve) => waiters.push(resolve));
      return text;
    },
  };
}

for (const backend of backends.filter((candidate) => candidate.name !== 'mysql'))
  describeWith(backend.available, backend.variable, `SIGTERM with a kept-alive connection (${backend.name})`, () => keepAlive(backend));

function keepAlive(backend: Backend): void {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const databases: { drop(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    for (const database of databases.splice(0)) await database.drop();
  });

  async function serve(): Promise<Server> {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-keep-alive-'));
    dirs.push(dir);
    const database = await backend.create();
    databases.push(database);
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SLUICE_')) env[key] = value;
    Object.assign(env, {
      SLUICE_DB_URL: database.url,
      SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
      SLUICE_HOST: '127.0.0.1',
      SLUICE_PORT: String(port),
      SLUICE_ADMIN_TOKEN: ADMIN,
      SLUICE_SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
      // Fastify's "incoming request" line tells the test that the server has read the headers.
      SLUICE_LOG_LEVEL: 'debug',
      SLUICE_LOG_FORMAT: 'json',
    });
    const child = spawn(process.execPath, ['--import', tsx, cli, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const server: Server = { child, port, lines: [], line: async () => ({ msg: '' }) };
    const waiters: (() => void)[] = [];
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = partial + chunk.toString();
      const parts = text.split('\n');
      partial = parts.pop()!;
      for (const part of parts) if (part.startsWith('{')) server.lines.push(JSON.parse(part) as Server['lines'][number]);
      for (const wake of waiters.splice(0)) wake();
    });
    const exited = once(child, 'exit');
    server.line = async (test) => {
      for (;;) {
        const found = server.lines.find(test);
        if (found) return found;
        const more = new Promise<'more'>((resolve) => waiters.push(() => resolve('more')));
        if ((await Promise.race([more, exited.then(() => 'exited' as const)])) === 'exited') {
          const last = server.lines.find(test);
          if (last) return last;
          throw new Error(`the server exited without the line; its last lines: ${JSON.stringify(server.lines.slice(-5))}`);
        }
      }
    };
    await server.line((line) => line.msg === 'sluice is serving');
    return server;
  }

  /** A kept-alive connection with one request answered, then a POST whose body is held back after its first bytes. */
  async function requestInFlight(server: Server, name: string) {
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    const read = reader(socket);
    socket.write('GET /healthz HTTP/1.1\r\nHost: sluice\r\n\r\n');
    await read.until(/\r\n\r\n[\s\S]*\}/);
    expect(read.text()).toMatch(/^HTTP\/1\.1 200/);
    expect(read.text()).toMatch(/connection: keep-alive/i);
    const body = JSON.stringify({ name });
    socket.write(
      `POST /v1/admin/tenants HTTP/1.1\r\nHost: sluice\r\nAuthorization: Bearer ${ADMIN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 4)}`,
    );
    await server.line(
      (line) => line.msg === 'incoming request' && (line.req as { route?: string } | undefined)?.route === '/v1/admin/tenants',
    );
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    return { socket, read, rest: body.slice(4), ended };
  }

  it('answers the request in flight with Connection: close, ends the connection, and exits within the timeout', async () => {
    const server = await serve();
    const { socket, read, rest, ended } = await requestInFlight(server, 'in-flight');
    const exited = once(server.child, 'exit');
    const signalled = performance.now();
    server.child.kill('SIGTERM');
    await server.line((line) => line.msg === 'waiting for the requests in progress');
    socket.write(rest);
    const answer = await read.until(/HTTP\/1\.1 201[\s\S]*\r\n\r\n[\s\S]*\}/);
    const second = answer.slice(answer.lastIndexOf('HTTP/1.1 201'));
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(second).not.toMatch(/keep-alive/i);
    await ended;
    const [code] = (await exited) as [number | null];
    const elapsed = performance.now() - signalled;
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
    const stopped = await server.line((line) => line.msg === 'sluice stopped');
    expect(stopped).toMatchObject({ timeoutMs: TIMEOUT_MS });
    expect(stopped.elapsedMs).toBeLessThanOrEqual(TIMEOUT_MS);
  }, 90_000);

  it('closes a connection whose request never ends at SLUICE_SHUTDOWN_TIMEOUT_MS, and says so', async () => {
    const server = await serve();
    const { ended } = await requestInFlight(server, 'never-ends');
    const exited = once(server.child, 'exit');
    const signalled = performance.now();
    server.child.kill('SIGTERM');
    await ended;
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    // The deadline, plus what follows it (the dispatchers, the snapshot, the database): well under a second here.
    expect(performance.now() - signalled).toBeLessThan(TIMEOUT_MS + 3000);
    expect(server.lines.map((line) => line.msg)).toContain('requests still in progress at SLUICE_SHUTDOWN_TIMEOUT_MS: closing under them');
    const stopped = await server.line((line) => line.msg.startsWith('sluice stopped'));
    expect(stopped).toMatchObject({ timeoutMs: TIMEOUT_MS });
  }, 90_000);
}

/**
 * A zero-latency HTTP provider stub on 127.0.0.1: answers every POST `200 {}` at once and counts
 * the requests, so a delivery benchmark measures the sender, not the receiver. `inChild: true`
 * serves from a child process, as a real receiver would be elsewhere: in process, the stub's own
 * HTTP parsing and answers take the sender's core.
 */
import { fork } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface HttpStub {
  readonly url: string;
  /** Requests answered so far (from a child: as of its last report, at most 5 ms old). */
  readonly requests: () => number;
  close(): Promise<void>;
}

/** The stub's server; `onRequest` after each answered request. */
export async function listenStub(onRequest: () => void): Promise<Server> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      onRequest();
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
      response.end('{}');
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export async function startHttpStub(options: { inChild?: boolean } = {}): Promise<HttpStub> {
  if (options.inChild) return startChildStub();
  let requests = 0;
  const server = await listenStub(() => requests++);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The same stub in a child process (bench/support/http-stub-child.ts), which reports its count every 5 ms. */
async function startChildStub(): Promise<HttpStub> {
  const child = fork(fileURLToPath(new URL('./http-stub-child.ts', import.meta.url)), { stdio: 'inherit' });
  let requests = 0;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (message: { port?: number; requests?: number }) => {
      if (message.port !== undefined) resolve(message.port);
      if (message.requests !== undefined) requests = message.requests;
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

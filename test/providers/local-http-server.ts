/**
 * A vendor stand-in for provider tests: a node:http server on 127.0.0.1 (ephemeral port) that
 * records every request (raw body included) and answers through a handler the test sets.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface VendorAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | object;
  /** Never answer (for timeout tests); the connection is destroyed when the server closes. */
  hang?: boolean;
}

export interface LocalHttpServer {
  url: string;
  host: string;
  requests: RecordedRequest[];
  answer(handler: (request: RecordedRequest) => VendorAnswer): void;
  close(): Promise<void>;
}

export async function startLocalHttpServer(): Promise<LocalHttpServer> {
  const requests: RecordedRequest[] = [];
  let handler: (request: RecordedRequest) => VendorAnswer = () => ({ status: 500, body: 'no handler set' });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      let answer: VendorAnswer;
      try {
        answer = handler(recorded);
      } catch (error) {
        answer = { status: 500, body: `handler threw: ${String(error)}` };
      }
      if (answer.hang) return;
      const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
      const type = typeof answer.body === 'string' ? 'text/plain' : 'application/json';
      res.writeHead(answer.status ?? 200, { 'content-type': type, ...answer.headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    answer(next) {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The rejection of `promise`, failing the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, the promise resolved');
}

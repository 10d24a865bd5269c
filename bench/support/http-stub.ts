/**
 * A zero-latency HTTP provider stub on 127.0.0.1: answers every POST `200 {}` at once and counts
 * the requests, so a delivery benchmark measures the sender, not the receiver.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpStub {
  readonly url: string;
  /** Requests answered so far. */
  readonly requests: () => number;
  close(): Promise<void>;
}

export async function startHttpStub(): Promise<HttpStub> {
  let requests = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
      response.end('{}');
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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

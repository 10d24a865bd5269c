/**
 * The connection caps over real sockets (inject has none): SLUICE_HTTP_MAX_CONNECTIONS in all and
 * SLUICE_HTTP_MAX_CONNECTIONS_PER_IP from one address. A connection over a cap is closed before it
 * is answered; one freed makes room for the next.
 */
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support.js';

let t: TestApp | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await t?.close();
  t = undefined;
});

async function listening(env: Record<string, string>): Promise<number> {
  t = await startApp(env);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  return (t.app.server.address() as AddressInfo).port;
}

/**
 * A kept-alive connection that has sent one GET /healthz: resolves its status line, or `closed`
 * when the server closes it without an answer.
 */
function probe(port: number, localAddress = '127.0.0.1'): Promise<{ socket: Socket; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    sockets.push(socket);
    let received = '';
    socket.on('error', () => undefined);
    socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'));
    socket.on('data', (chunk) => {
      received += chunk.toString();
      if (received.includes('\r\n\r\n')) resolve({ socket, answer: received.split('\r\n')[0]! });
    });
    socket.on('close', () => resolve({ socket, answer: received ? received.split('\r\n')[0]! : 'closed' }));
    setTimeout(() => reject(new Error('no answer and not closed in 5 s')), 5000).unref();
  });
}

/** The refused-connections lines of `/metrics`. */
const refused = async () =>
  (await t!.app.inject({ url: '/metrics' })).body
    .split('\n')
    .filter((line) => line.startsWith('sluice_http_connections_refused_total'))
    .join('\n') + '\n';

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

/** Polls `probe` until it is answered: the server counts a closed connection out a moment after the client sees it close. */
async function answeredSoon(port: number, localAddress?: string): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const { answer } = await probe(port, localAddress);
    if (answer !== 'closed') return answer;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return 'closed';
}

describe('connection caps', () => {
  it('SLUICE_HTTP_MAX_CONNECTIONS: the connection over the cap is closed unanswered; a freed one makes room', async () => {
    const port = await listening({ SLUICE_HTTP_MAX_CONNECTIONS: '3' });
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await probe(port));
    expect(held.map((connection) => connection.answer)).toEqual(Array(3).fill('HTTP/1.1 200 OK'));
    // Kept alive: all three are still open while the fourth and fifth arrive.
    expect(held.every((connection) => !connection.socket.destroyed)).toBe(true);
    expect((await probe(port)).answer).toBe('closed');
    expect((await probe(port)).answer).toBe('closed');
    expect(await refused()).toMatch(/sluice_http_connections_refused_total\{cap="max"\} 2\n/);

    held[0]!.socket.destroy();
    await closed(held[0]!.socket);
    expect(await answeredSoon(port)).toBe('HTTP/1.1 200 OK');
  });

  it('SLUICE_HTTP_MAX_CONNECTIONS_PER_IP: one address over its cap is closed; another address is still served', async () => {
    const port = await listening({ SLUICE_HTTP_MAX_CONNECTIONS_PER_IP: '2' });
    const held = [await probe(port), await probe(port)];
    expect(held.map((connection) => connection.answer)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    expect((await probe(port)).answer).toBe('closed');
    expect(await refused()).toMatch(/sluice_http_connections_refused_total\{cap="per_ip"\} 1\n/);
    // Another loopback address is another client.
    expect((await probe(port, '127.0.0.2')).answer).toBe('HTTP/1.1 200 OK');

    held[1]!.socket.destroy();
    await closed(held[1]!.socket);
    expect(await answeredSoon(port)).toBe('HTTP/1.1 200 OK');
  });

  it('by default (10,000 in all, no per-address cap) many connections from one address are served', async () => {
    const port = await listening({});
    expect(t!.app.server.maxConnections).toBe(10_000);
    const held = await Promise.all(Array.from({ length: 50 }, () => probe(port)));
    expect(held.filter((connection) => connection.answer === 'HTTP/1.1 200 OK')).toHaveLength(50);
  });
});

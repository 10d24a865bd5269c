/**
 * The requests an app tracks for its shutdown (`RequestsInProgress`): every request that begins
 * ends, however it is answered (a route, 404, a framework error, a refused body) or abandoned (a
 * client hanging up mid-body); a tracked request ends when its handler is done, not when its
 * client hangs up.
 */
import { type AddressInfo, connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.js';
import { RequestsInProgress } from '../../src/http/requests-in-progress.js';
import { ADMIN_TOKEN, startApp, type TestApp } from './support.js';

let t: TestApp | undefined;
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  await t?.close();
  app = undefined;
  t = undefined;
});

async function tracked(): Promise<{ app: FastifyInstance; inProgress: RequestsInProgress; apiKey: string }> {
  t = await startApp();
  const { apiKey } = await t.createTenant();
  const inProgress = new RequestsInProgress();
  app = await buildHttpApp(t.runtime.http, { inProgress });
  return { app, inProgress, apiKey };
}

describe('requests in progress', () => {
  it('ends every request, however it is answered', async () => {
    const { app, inProgress, apiKey } = await tracked();
    const bearer = { authorization: `Bearer ${apiKey}` };
    const answers = await Promise.all([
      app.inject({ url: '/healthz' }),
      app.inject({ url: '/nowhere' }),
      app.inject({ url: '/v1/messages/%E0%A4%A' }),
      app.inject({ method: 'POST', url: '/v1/messages', payload: { channel: 'sms', to: '+8613800138000', body: 'x' } }),
      app.inject({
        method: 'POST',
        url: '/v1/messages',
        headers: { ...bearer, 'content-type': 'application/json' },
        payload: '{"channel":',
      }),
      app.inject({ method: 'POST', url: '/v1/messages', headers: { ...bearer, 'content-type': 'text/plain' }, payload: 'hello' }),
      app.inject({ method: 'POST', url: '/v1/messages', headers: bearer, payload: { channel: 'sms', to: '+8613800138000', body: 'x' } }),
      app.inject({ url: '/v1/admin/tenants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 404, 400, 401, 400, 415, 202, 200]);
    expect(inProgress.size).toBe(0);
  });

  it('ends a request whose client hangs up mid-body, once the server has given it up', async () => {
    const { app, inProgress, apiKey } = await tracked();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const socket = connect({ host: '127.0.0.1', port: (app.server.address() as AddressInfo).port });
    socket.on('error', () => undefined);
    const begun = new Promise<void>((resolve) => app!.server.once('request', () => resolve()));
    socket.write(
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"channel":`,
    );
    await begun;
    socket.destroy();
    expect(await inProgress.settled(5000)).toBe(0);
  });
});

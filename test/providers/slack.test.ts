import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutboundMessage, ProviderError } from '../../src/providers/provider.js';
import { createSlackProvider } from '../../src/providers/slack.js';
import { type LocalHttpServer, rejectionOf, startLocalHttpServer } from './local-http-server.js';

describe('Slack incoming webhook against a local stand-in', () => {
  let server: LocalHttpServer;
  const message: OutboundMessage = { id: 'msg-sl-1', tenantId: 't1', channel: 'webhook', to: 'ops-alerts', body: 'deploy finished' };
  const provider = () =>
    createSlackProvider({ id: 'slack-ops', channel: 'webhook', webhookUrl: `${server.url}/services/T000/B000/XXXX`, timeoutMs: 5_000 });

  beforeAll(async () => {
    server = await startLocalHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('posts {text} and accepts 200 ok', async () => {
    server.answer((request) =>
      request.headers['content-type']?.startsWith('application/json') && JSON.parse(request.body).text === 'deploy finished'
        ? { status: 200, body: 'ok' }
        : { status: 400, body: 'invalid_payload' },
    );
    expect(await provider().send(message)).toEqual({ providerMessageId: 'slack-msg-sl-1' });
    const request = server.requests.at(-1)!;
    expect([request.method, request.path]).toEqual(['POST', '/services/T000/B000/XXXX']);
    expect(JSON.parse(request.body)).toEqual({ text: 'deploy finished' });
  });

  it('puts the subject in bold above the body', async () => {
    server.answer(() => ({ status: 200, body: 'ok' }));
    await provider().send({ ...message, subject: 'Deploy' });
    expect(JSON.parse(server.requests.at(-1)!.body)).toEqual({ text: '*Deploy*\ndeploy finished' });
  });

  it('makes 429 retryable and carries Retry-After', async () => {
    server.answer(() => ({ status: 429, body: 'rate_limited', headers: { 'retry-after': '30' } }));
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([error.retryable, error.status, error.retryAfterMs, error.code]).toEqual([true, 429, 30_000, 'SLACK_rate_limited']);
  });

  it.each([
    [400, 'invalid_payload', false],
    [403, 'action_prohibited', false],
    [404, 'channel_not_found', false],
    [410, 'channel_is_archived', false],
    [500, 'rollup_error', true],
    [503, '<html>unavailable</html>', true],
  ])('classifies HTTP %i %s as retryable=%s', async (status, body, retryable) => {
    server.answer(() => ({ status, body }));
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect(error.retryable).toBe(retryable);
    expect(error.code).toBe(/^[a-z_]+$/.test(body) ? `SLACK_${body}` : `HTTP_${status}`);
    expect(error.message).not.toContain('/services/T000');
  });
});

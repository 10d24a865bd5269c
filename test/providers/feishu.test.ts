import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { createFeishuProvider } from '../../src/providers/feishu.js';
import type { OutboundMessage, ProviderError } from '../../src/providers/provider.js';
import { type LocalHttpServer, rejectionOf, startLocalHttpServer } from './local-http-server.js';

// Feishu's custom-bot guide documents the algorithm (HMAC-SHA256 keyed by `timestamp + "\n" + secret`
// over an empty message, Base64) and an example timestamp (1599360473), but publishes no resulting
// sign value, so there is no vendor vector to pin here: the stand-in below re-derives it independently.

const SIGNING_SECRET = 'feishu-bot-secret';
const NOW_MS = 1_714_979_289_000;

describe('Feishu custom bot against a local stand-in', () => {
  let server: LocalHttpServer;
  const clock = new ManualClock(NOW_MS);
  const message: OutboundMessage = {
    id: 'msg-fs-1',
    tenantId: 't1',
    channel: 'webhook',
    to: 'ops-alerts',
    subject: 'Disk full',
    body: 'db-1 at 97%',
  };
  const provider = (secret: string | null = SIGNING_SECRET) =>
    createFeishuProvider({
      id: 'feishu-ops',
      channel: 'webhook',
      webhookUrl: `${server.url}/open-apis/bot/v2/hook/abc-token`,
      ...(secret === null ? {} : { signingSecret: secret }),
      timeoutMs: 5_000,
      clock,
    });

  /** Feishu's check, written from its guide: the sign is valid and the timestamp within an hour. */
  const feishuAnswers = (answer: object) =>
    server.answer((request) => {
      const body = JSON.parse(request.body) as { timestamp?: string; sign?: string };
      const key = `${body.timestamp}\n${SIGNING_SECRET}`;
      const expected = createHmac('sha256', Buffer.from(key, 'utf8')).update(Buffer.alloc(0)).digest('base64');
      const fresh = Math.abs(Number(body.timestamp) - NOW_MS / 1000) <= 3600;
      if (body.sign !== expected || !fresh)
        return { body: { code: 19021, msg: 'sign match fail or timestamp is not within one hour from current time', data: {} } };
      return { body: answer };
    });

  beforeAll(async () => {
    server = await startLocalHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('posts a signed text message', async () => {
    feishuAnswers({ code: 0, msg: 'success', data: {} });
    expect(await provider().send(message)).toEqual({ providerMessageId: 'feishu-msg-fs-1' });
    const request = server.requests.at(-1)!;
    expect(request.path).toBe('/open-apis/bot/v2/hook/abc-token');
    expect(JSON.parse(request.body)).toEqual({
      timestamp: String(NOW_MS / 1000),
      sign: expect.any(String),
      msg_type: 'text',
      content: { text: 'Disk full\ndb-1 at 97%' },
    });
  });

  it('accepts the older {StatusCode: 0} answer', async () => {
    feishuAnswers({ Extra: null, StatusCode: 0, StatusMessage: 'success' });
    await expect(provider().send(message)).resolves.toEqual({ providerMessageId: 'feishu-msg-fs-1' });
  });

  it('is refused with 19021 when signed with the wrong secret: permanent', async () => {
    feishuAnswers({ code: 0, msg: 'success' });
    const error = (await rejectionOf(provider('not-the-secret').send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['FEISHU_19021', false]);
  });

  it.each([
    [{ code: 11232, msg: 'frequency limited psm[lark.oapi.app_platform_runtime]appID[1]', data: {} }, 200, 'FEISHU_11232', true],
    [{ code: 9499, msg: 'too many request', data: {} }, 200, 'FEISHU_9499', true],
    [{ code: 9499, msg: 'Bad Request', data: {} }, 200, 'FEISHU_9499', false],
    [{ code: 19024, msg: 'Key Words Not Found' }, 200, 'FEISHU_19024', false],
    [{ code: 9499, msg: 'Bad Request' }, 400, 'FEISHU_9499', false],
  ])('classifies %j (HTTP %i) as %s retryable=%s', async (answer, status, code, retryable) => {
    server.answer(() => ({ status, body: answer }));
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual([code, retryable]);
  });

  it('treats HTTP 429 and 5xx without a Feishu body as retryable', async () => {
    server.answer(() => ({ status: 429, body: 'slow down', headers: { 'retry-after': '2' } }));
    const limited = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([limited.code, limited.retryable, limited.retryAfterMs]).toEqual(['HTTP_429', true, 2000]);
    server.answer(() => ({ status: 500, body: 'oops' }));
    const broken = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([broken.code, broken.retryable]).toEqual(['HTTP_500', true]);
  });

  it('sends no timestamp or sign when the bot has no signing secret', async () => {
    server.answer(() => ({ body: { code: 0, msg: 'success' } }));
    await provider(null).send(message);
    expect(JSON.parse(server.requests.at(-1)!.body)).toEqual({ msg_type: 'text', content: { text: 'Disk full\ndb-1 at 97%' } });
  });
});

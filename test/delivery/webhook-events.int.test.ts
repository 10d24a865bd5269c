/**
 * Status callbacks end to end: a runtime with delivery sends messages through a stub vendor, and a
 * real local HTTP server subscribed as the tenant's webhook checks the signature of every post and
 * records the events in order of arrival. Short retry delays stand in for the 24 h schedule.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature, verifyStandardWebhook } from '../../src/core/webhook-signature.js';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import {
  addWebhookProvider,
  silentConsole,
  sleep,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
  waitFor,
} from './delivery-support.js';

interface Received {
  eventId: string;
  type: string;
  messageId: string;
  body: Record<string, unknown>;
}

/** A tenant's endpoint: verifies each signature, records what it answered 2xx, fails on demand. */
interface Receiver {
  url: string;
  secrets: string[];
  /** Every post, in order of arrival (including those answered with an error). */
  posts: Received[];
  /** Posts answered 2xx, in order. */
  delivered: Received[];
  badSignatures: number;
  answer: (post: Received) => number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    secrets: [],
    posts: [],
    delivered: [],
    badSignatures: 0,
    answer: () => 200,
    close: async () => {},
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const header = String(request.headers['sluice-signature'] ?? '');
      const standard = {
        id: String(request.headers['webhook-id'] ?? ''),
        timestamp: String(request.headers['webhook-timestamp'] ?? ''),
        signature: String(request.headers['webhook-signature'] ?? ''),
      };
      const now = Math.floor(Date.now() / 1000);
      // Both schemes, each under a secret the receiver knows (during a rotation it may know one).
      const verified = (check: (secret: string) => boolean) => receiver.secrets.some(check);
      if (
        !verified((secret) => verifySignature(text, header, secret, now)) ||
        !verified((secret) => verifyStandardWebhook(text, standard, secret, now))
      ) {
        receiver.badSignatures++;
        response.writeHead(400).end();
        return;
      }
      const body = JSON.parse(text) as Record<string, unknown> & { data: { messageId: string } };
      const post = { eventId: String(request.headers['sluice-event-id']), type: String(body.type), messageId: body.data.messageId, body };
      expect(post.eventId).toBe(body.id);
      expect(standard.id).toBe(body.id);
      receiver.posts.push(post);
      const status = receiver.answer(post);
      if (status < 300) receiver.delivered.push(post);
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

describe('webhook events, end to end', () => {
  let runtime: Runtime;
  let delivery: Delivery;
  let stub: WebhookStub;
  let cleanup = () => {};

  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    stub = await startWebhookStub();
    runtime = await testRuntime(
      testEnv(temp.dir, undefined, {
        SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
        SLUICE_WEBHOOK_POLL_MS: '50',
        SLUICE_WEBHOOK_RETRY_BASE_MS: '20',
        SLUICE_WEBHOOK_RETRY_MAX_MS: '200',
      }),
    );
    delivery = startWorker(runtime, silentConsole());
  });

  afterAll(async () => {
    await delivery?.stop();
    await runtime?.close();
    await stub?.close();
    cleanup();
  });

  /** A tenant with a vendor (the stub, answering 400 for recipients starting `bad-`) and a subscribed receiver. */
  async function subscribedTenant(receiver: Receiver, events?: string[]) {
    const tenant = await runtime.http.tenants.createTenant(`t-${Date.now()}-${Math.random()}`);
    await addWebhookProvider(runtime, tenant.id, `${stub.url}/vendor`);
    const webhook = await runtime.services.webhooks.create(tenant.id, {
      url: receiver.url,
      ...(events ? { events: events as never } : {}),
    });
    receiver.secrets.push(webhook!.secret);
    return { tenant, webhook: webhook! };
  }

  async function sendMany(apiKey: string, count: number, to: (k: number) => string = (k) => `ops-${k}`): Promise<string[]> {
    const ids: string[] = [];
    for (let k = 0; k < count; k++)
      ids.push((await runtime.http.messages.send(apiKey, { channel: 'webhook', to: to(k), body: `m${k}` })).id);
    return ids;
  }

  /** Per message, the event types delivered, in order of arrival. */
  const typesByMessage = (posts: readonly Received[]) => {
    const map = new Map<string, string[]>();
    for (const post of posts) map.set(post.messageId, [...(map.get(post.messageId) ?? []), post.type]);
    return map;
  };

  it('posts every event signed, in order per message, each once when the endpoint answers 2xx', async () => {
    const receiver = await startReceiver();
    try {
      stub.answer = () => 200;
      const { tenant } = await subscribedTenant(receiver, ['message.accepted', 'message.sent', 'message.failed']);
      const ids = await sendMany(tenant.apiKey, 40);
      expect(await waitFor(() => receiver.delivered.length === 80, 20_000)).toBe(true);
      expect(receiver.badSignatures).toBe(0);
      const byMessage = typesByMessage(receiver.delivered);
      for (const id of ids) expect(byMessage.get(id), id).toEqual(['message.accepted', 'message.sent']);
      expect(new Set(receiver.delivered.map((post) => post.eventId)).size).toBe(80);
      const sent = receiver.delivered.find((post) => post.type === 'message.sent')!;
      expect(sent.body.data).toMatchObject({ channel: 'webhook', status: 'sent', attempt: 1 });
      expect((sent.body.data as { providerMessageId: string }).providerMessageId).toMatch(/^stub-/);
    } finally {
      await receiver.close();
    }
  });

  it('an endpoint down for a while gets every event after, still in order', async () => {
    const receiver = await startReceiver();
    try {
      stub.answer = () => 200;
      let down = true;
      receiver.answer = () => (down ? 503 : 200);
      const { tenant } = await subscribedTenant(receiver, ['message.accepted', 'message.sent']);
      const ids = await sendMany(tenant.apiKey, 20);
      expect(await waitFor(() => receiver.posts.length >= 60, 20_000)).toBe(true);
      expect(receiver.delivered).toEqual([]);
      down = false;
      expect(await waitFor(() => receiver.delivered.length === 40, 20_000)).toBe(true);
      const byMessage = typesByMessage(receiver.delivered);
      for (const id of ids) expect(byMessage.get(id), id).toEqual(['message.accepted', 'message.sent']);
      // While the accepted event was failing, its message's sent event was never posted.
      const posted = typesByMessage(receiver.posts);
      for (const id of ids) {
        const types = posted.get(id)!;
        expect(types.indexOf('message.sent')).toBeGreaterThan(types.lastIndexOf('message.accepted'));
      }
      expect(receiver.badSignatures).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it('with 30% of answers 500 every event arrives, none twice once answered 2xx', async () => {
    const receiver = await startReceiver();
    try {
      stub.answer = () => 200;
      let posts = 0;
      // Deterministic 30%: three in every ten posts fail.
      receiver.answer = () => (posts++ % 10 < 3 ? 500 : 200);
      const { tenant } = await subscribedTenant(receiver);
      const ids = await sendMany(tenant.apiKey, 100);
      expect(await waitFor(() => receiver.delivered.length === 100, 30_000)).toBe(true);
      await sleep(300);
      expect(receiver.delivered).toHaveLength(100);
      const byMessage = typesByMessage(receiver.delivered);
      for (const id of ids) expect(byMessage.get(id), id).toEqual(['message.sent']);
      expect(receiver.posts.length).toBeGreaterThan(100);
      const counted = await runtime.metrics.registry.getSingleMetricAsString('sluice_webhook_events_total');
      expect(counted).toMatch(/outcome="retried"/);
    } finally {
      await receiver.close();
    }
  });

  it('a dead endpoint holds up no other; its events stay pending, and another tenant can neither list nor replay them', async () => {
    const dead = await startReceiver();
    const alive = await startReceiver();
    try {
      stub.answer = () => 200;
      dead.answer = () => 500;
      const deadTenant = await subscribedTenant(dead);
      const aliveTenant = await subscribedTenant(alive);
      await sendMany(deadTenant.tenant.apiKey, 30);
      const ids = await sendMany(aliveTenant.tenant.apiKey, 30);
      expect(await waitFor(() => alive.delivered.length === 30, 20_000)).toBe(true);
      expect(new Set(alive.delivered.map((post) => post.messageId))).toEqual(new Set(ids));
      expect(dead.delivered).toEqual([]);
      const pending = await runtime.services.webhooks.listEvents(deadTenant.tenant.id, deadTenant.webhook.id, { status: 'pending' });
      expect(pending).toHaveLength(30);
      // Another tenant cannot see or replay them.
      expect(await runtime.services.webhooks.listEvents(aliveTenant.tenant.id, deadTenant.webhook.id)).toBeUndefined();
      expect(await runtime.services.webhooks.replay(aliveTenant.tenant.id, deadTenant.webhook.id, pending![0]!.id)).toBeUndefined();
    } finally {
      await dead.close();
      await alive.close();
    }
  });

  it('signs with both secrets during a rotation; the receiver that knows only the new one accepts', async () => {
    const receiver = await startReceiver();
    try {
      stub.answer = () => 200;
      const { tenant, webhook } = await subscribedTenant(receiver, ['message.sent']);
      const rotated = await runtime.services.webhooks.rotateSecret(tenant.id, webhook.id);
      receiver.secrets = [rotated!.secret];
      receiver.answer = () => 200;
      await sendMany(tenant.apiKey, 3);
      expect(await waitFor(() => receiver.delivered.length === 3, 20_000)).toBe(true);
      expect(receiver.badSignatures).toBe(0);
      // And one knowing only the old secret accepts as well during the grace period.
      receiver.secrets = [webhook.secret];
      await sendMany(tenant.apiKey, 2);
      expect(await waitFor(() => receiver.delivered.length === 5, 20_000)).toBe(true);
      expect(receiver.badSignatures).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});

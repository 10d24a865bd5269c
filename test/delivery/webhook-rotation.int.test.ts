/**
 * A rotated webhook secret signs the very next post, on every instance: with no grace period the
 * old secret signs nothing after `rotate-secret` returns. Each case first has a post signed, so
 * the event dispatcher holds the old secret in its cache, then rotates and posts again; the
 * receiver knows only the new secret. In process (the embedded default), and across two instances
 * sharing Redis and the database: the rotation through one (API only), the posts by the other.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature, verifyStandardWebhook } from '../../src/core/webhook-signature.js';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { describeWith, servers } from '../support/servers.js';
import {
  addWebhookProvider,
  silentConsole,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  type WebhookStub,
  waitFor,
} from './delivery-support.js';

interface Post {
  body: string;
  headers: Record<string, string>;
}

/** Which of `secrets` sign `post`, in each scheme. */
function signers(post: Post, secrets: Record<string, string>): { standard: string[]; legacy: string[] } {
  const now = Math.floor(Date.now() / 1000);
  const standard = {
    id: post.headers['webhook-id']!,
    timestamp: post.headers['webhook-timestamp']!,
    signature: post.headers['webhook-signature']!,
  };
  const names = Object.keys(secrets);
  return {
    standard: names.filter((name) => verifyStandardWebhook(post.body, standard, secrets[name]!, now)),
    legacy: names.filter((name) => verifySignature(post.body, post.headers['sluice-signature']!, secrets[name]!, now)),
  };
}

async function startReceiver(): Promise<{ url: string; posts: Post[]; close(): Promise<void> }> {
  const posts: Post[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      posts.push({ body, headers: request.headers as Record<string, string> });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const EXTRA = { SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true', SLUICE_WEBHOOK_POLL_MS: '50', SLUICE_WEBHOOK_ROTATE_GRACE_HOURS: '0' };

/**
 * The case itself: `admin` rotates, `worker` posts. Before sending, the worker's instance must have
 * had the time to hear of the rotation: `admin` then makes a config change of its own (a rule set
 * of the tenant), announced on the same bus after the rotation's, and the test waits until the
 * worker's instance hears that (in order: one publisher, one channel).
 */
async function rotationCase(admin: Runtime, worker: Runtime, vendorUrl: string): Promise<void> {
  const receiver = await startReceiver();
  try {
    const tenant = await admin.http.tenants.createTenant(`rotate-${Date.now()}-${Math.random()}`);
    await addWebhookProvider(admin, tenant.id, vendorUrl);
    const webhook = (await admin.services.webhooks.create(tenant.id, { url: receiver.url, events: ['message.sent'] }))!;
    // Sent through the worker's instance, whose due feed wakes its dispatchers.
    const send = () => worker.http.messages.send(tenant.apiKey, { channel: 'webhook', to: `ops-${Math.random()}`, body: 'x' });
    await send();
    expect(await waitFor(() => receiver.posts.length === 1, 20_000)).toBe(true);
    expect(signers(receiver.posts[0]!, { old: webhook.secret })).toEqual({ standard: ['old'], legacy: ['old'] });

    const heard = new Promise<void>((resolve) => {
      const stop = worker.onConfigChange((key) => {
        if (key === `tenant:${tenant.id}`) {
          stop();
          resolve();
        }
      });
    });
    const rotated = (await admin.services.webhooks.rotateSecret(tenant.id, webhook.id))!;
    await admin.http.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 60, limit: 100, banSeconds: 0 }]);
    await heard;
    await send();
    expect(await waitFor(() => receiver.posts.length === 2, 20_000)).toBe(true);
    // Signed by the new secret alone: the old one, rotated out with no grace, signs nothing.
    expect(signers(receiver.posts[1]!, { old: webhook.secret, new: rotated.secret })).toEqual({ standard: ['new'], legacy: ['new'] });
  } finally {
    await receiver.close();
  }
}

describe('webhook secret rotation, in process', () => {
  let runtime: Runtime;
  let delivery: Delivery;
  let stub: WebhookStub;
  let cleanup = () => {};

  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    stub = await startWebhookStub();
    runtime = await testRuntime(testEnv(temp.dir, undefined, EXTRA));
    delivery = startWorker(runtime, silentConsole());
  });
  afterAll(async () => {
    await delivery?.stop();
    await runtime?.close();
    await stub?.close();
    cleanup();
  });

  it('with no grace period, the first post after rotate-secret carries the new secret only', async () => {
    await rotationCase(runtime, runtime, `${stub.url}/vendor`);
  }, 60_000);
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'webhook secret rotation, across two instances sharing Redis', () => {
  let api: Runtime;
  let worker: Runtime;
  let delivery: Delivery;
  let stub: WebhookStub;
  let cleanup = () => {};

  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    stub = await startWebhookStub();
    const prefix = { SLUICE_REDIS_KEY_PREFIX: `rotate${Date.now()}:` };
    worker = await testRuntime(testEnv(temp.dir, servers.redisUrl, { ...EXTRA, ...prefix }));
    api = await testRuntime(testEnv(temp.dir, servers.redisUrl, { ...EXTRA, ...prefix }));
    delivery = startWorker(worker, silentConsole());
  });
  afterAll(async () => {
    await delivery?.stop();
    await api?.close();
    await worker?.close();
    await stub?.close();
    cleanup();
  });

  it("a rotation through one instance reaches the other's posts at once", async () => {
    await rotationCase(api, worker, `${stub.url}/vendor`);
  }, 60_000);
});

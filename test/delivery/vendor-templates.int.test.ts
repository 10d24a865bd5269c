/**
 * Stored templates as the providers send them. Failover across SMS vendors: a real dispatcher
 * sends a message rendered from a template whose `vendor` names an Aliyun and a Tencent template;
 * Aliyun (first) fails retryably, and the retry goes to Tencent with Tencent's own TemplateId, sign
 * and param order (both vendors local HTTP servers recording the requests). Then the webhook and
 * email channels: the rendered text reaches a local HTTP receiver and a real SMTP server, the
 * email's HTML escaped.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { type LocalHttpServer, startLocalHttpServer } from '../providers/local-http-server.js';
import { silentConsole, tempDir, testEnv, testRuntime, waitFor } from './delivery-support.js';

describe('stored SMS templates across vendors', () => {
  let runtime: Runtime;
  let delivery: Delivery;
  let aliyun: LocalHttpServer;
  let tencent: LocalHttpServer;
  let cleanup = () => {};
  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    aliyun = await startLocalHttpServer();
    tencent = await startLocalHttpServer();
    runtime = await testRuntime(testEnv(temp.dir));
    delivery = startWorker(runtime, silentConsole());
  });
  afterAll(async () => {
    await delivery?.stop();
    await runtime?.close();
    await aliyun?.close();
    await tencent?.close();
    cleanup();
  });

  it("fails over from Aliyun to Tencent, each request carrying that vendor's template", async () => {
    const tenant = await runtime.http.tenants.createTenant(`vendors-${Date.now()}`);
    await runtime.repositories.providers.create({
      scope: tenant.id,
      channel: 'sms',
      kind: 'aliyun-sms',
      name: 'aliyun',
      priority: 1,
      qps: 100,
      config: { signName: 'DefaultSign', endpoint: aliyun.url },
      secret: JSON.stringify({ accessKeyId: 'ak', accessKeySecret: 'sk' }),
    });
    await runtime.repositories.providers.create({
      scope: tenant.id,
      channel: 'sms',
      kind: 'tencent-sms',
      name: 'tencent',
      priority: 2,
      qps: 100,
      config: { sdkAppId: '1400000001', endpoint: tencent.url, region: 'ap-guangzhou' },
      secret: JSON.stringify({ secretId: 'sid', secretKey: 'skey' }),
    });
    aliyun.answer(() => ({ status: 503, body: { Code: 'ServiceUnavailable', Message: 'busy' } }));
    tencent.answer(() => ({
      body: { Response: { SendStatusSet: [{ SerialNo: 'serial-1', Code: 'Ok', Message: 'send success' }], RequestId: 'r' } },
    }));
    await runtime.services.templates.putTemplate(tenant.id, 'sms', 'otp', {
      params: { code: { type: 'string' }, minutes: { type: 'number' } },
      body: 'Your code is {{code}} ({{minutes}} min)',
      vendor: {
        'aliyun-sms': { templateCode: 'SMS_A', signName: 'ShopA' },
        'tencent-sms': { templateCode: '2002', signName: 'ShopT', paramOrder: ['minutes', 'code'] },
      },
    });
    const sent = await runtime.http.messages.send(tenant.apiKey, {
      channel: 'sms',
      to: '+8613800138000',
      template: 'otp',
      params: { code: '1234', minutes: 5 },
    });
    expect(await waitFor(async () => (await runtime.repositories.messages.get(sent.id))?.status === 'sent', 15_000)).toBe(true);

    const aliyunParams = new URLSearchParams(aliyun.requests[0]!.body);
    expect(aliyunParams.get('TemplateCode')).toBe('SMS_A');
    expect(aliyunParams.get('SignName')).toBe('ShopA');
    expect(JSON.parse(aliyunParams.get('TemplateParam')!)).toEqual({ code: '1234', minutes: '5' });
    expect(JSON.parse(tencent.requests[0]!.body)).toMatchObject({ TemplateId: '2002', SignName: 'ShopT', TemplateParamSet: ['5', '1234'] });
    const message = await runtime.repositories.messages.get(sent.id);
    expect(message?.providerMessageId).toBe('serial-1');
  }, 30_000);

  it('webhook and email templates reach their receivers rendered, the HTML escaped', async () => {
    const tenant = await runtime.http.tenants.createTenant(`rendered-${Date.now()}`);
    const receiver = await startLocalHttpServer();
    const mails: string[] = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          mails.push(Buffer.concat(chunks).toString('utf8'));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    try {
      receiver.answer(() => ({ body: { ok: true } }));
      await runtime.repositories.providers.create({
        scope: tenant.id,
        channel: 'webhook',
        kind: 'http',
        name: 'hook',
        priority: 1,
        qps: 100,
        config: { url: receiver.url },
        secret: JSON.stringify({ signingSecret: 'hook-secret' }),
      });
      await runtime.repositories.providers.create({
        scope: tenant.id,
        channel: 'email',
        kind: 'smtp',
        name: 'relay',
        priority: 1,
        qps: 100,
        config: { host: '127.0.0.1', port: (smtp.server.address() as AddressInfo).port, from: 'shop@example.com', ignoreTLS: true },
        secret: JSON.stringify({}),
      });
      const params = { name: { type: 'string' as const } };
      await runtime.services.templates.putTemplate(tenant.id, 'webhook', 'deployed', { params, body: 'Deployed {{name}}' });
      await runtime.services.templates.putTemplate(tenant.id, 'email', 'welcome', {
        params,
        subject: 'Welcome, {{name}}',
        body: 'Hello {{name}}',
        html: '<p>Hello <b>{{name}}</b></p>',
      });
      const hook = await runtime.http.messages.send(tenant.apiKey, {
        channel: 'webhook',
        to: 'ops',
        template: 'deployed',
        params: { name: 'api v2' },
      });
      const mail = await runtime.http.messages.send(tenant.apiKey, {
        channel: 'email',
        to: 'ann@example.com',
        template: 'welcome',
        params: { name: 'Ann <&>' },
      });
      const sent = async (id: string) => (await runtime.repositories.messages.get(id))?.status === 'sent';
      expect(await waitFor(async () => (await sent(hook.id)) && (await sent(mail.id)), 15_000)).toBe(true);
      expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ channel: 'webhook', body: 'Deployed api v2' });
      const raw = mails[0]!.replace(/=\r?\n/g, '');
      expect(raw).toMatch(/^Subject: Welcome, Ann <&>/m);
      expect(raw).toContain('Hello Ann <&>');
      expect(raw).toContain('<p>Hello <b>Ann &lt;&amp;&gt;</b></p>');
    } finally {
      await receiver.close();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
  }, 30_000);
});

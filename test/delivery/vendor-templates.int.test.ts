/**
 * Failover across SMS vendors with a stored template: a real dispatcher sends a message rendered
 * from a template whose `vendor` names an Aliyun and a Tencent template; Aliyun (first) fails
 * retryably, and the retry goes to Tencent with Tencent's own TemplateId, sign and param order.
 * Both vendors are local HTTP servers recording the requests.
 */
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
    const tenant = await runtime.http.admin.createTenant(`vendors-${Date.now()}`);
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
});

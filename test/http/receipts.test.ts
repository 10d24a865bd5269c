/**
 * Delivery receipts through HTTP, with the vendors' documented sample pushes (Aliyun SmsReport
 * HTTP batch push; Tencent Cloud SMS status callback): both orders of receipt and settle,
 * duplicates, bad tokens, malformed bodies, another tenant's provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support.js';

/** Aliyun's sample (SmsReport, "参数示例"), with our ids and times. */
const aliyunPush = (bizId: string, success = true) => [
  {
    phone_number: '1381111****',
    send_time: '2026-12-01 23:00:00',
    report_time: '2026-12-01 23:00:03',
    success,
    err_code: success ? 'DELIVERED' : 'MK:0001',
    err_msg: success ? '用户接收成功' : '用户接收失败',
    sms_size: '1',
    biz_id: bizId,
    out_id: '67890',
  },
];

/** Tencent's sample (短信下发状态通知, "请求示例"). */
const tencentPush = (sid: string, status = 'SUCCESS') => [
  {
    user_receive_time: '2015-10-17 08:03:04',
    nationcode: '86',
    mobile: '13xxxxxxxxx',
    report_status: status,
    errmsg: status === 'SUCCESS' ? 'DELIVRD' : 'UNDELIV',
    description: '用户短信送达成功',
    sid,
  },
];

describe('delivery receipts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => t?.close());

  async function setup(kind: 'aliyun-sms' | 'tencent-sms') {
    const tenant = await t.createTenant();
    const provider = await t.runtime.repositories.providers.create({
      scope: tenant.id,
      channel: 'sms',
      kind,
      name: `${kind}-${Math.random()}`,
      qps: 10,
      config: {},
    });
    const issued = await t.admin('POST', `/v1/admin/providers/${provider.id}/receipt-token`);
    expect(issued.statusCode, issued.body).toBe(200);
    const { token, path } = issued.json() as { token: string; path: string };
    expect(path).toBe(`/v1/receipts/${provider.id}?token=${token}`);
    return { tenant, provider, token, path };
  }

  async function sent(tenantId: string, providerId: string, providerMessageId: string) {
    const messages = t.runtime.repositories.messages;
    const message = await messages.insert({
      tenantId,
      channel: 'sms',
      recipient: '+8613811112222',
      payload: { template: 'x' },
      now: t.clock.now(),
    });
    const [claimed] = await messages.claimMany([message.id], { now: t.clock.now(), leaseMs: 5000 });
    expect(await messages.markSent(message.id, { attempt: claimed!.attempts, now: t.clock.now(), providerId, providerMessageId })).toBe(
      true,
    );
    return message.id;
  }

  const push = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: path, headers, payload: body as object });

  it('Aliyun: a report after the settle delivers the message, keeps the code, answers as Aliyun expects; a duplicate changes nothing', async () => {
    const { tenant, provider, path } = await setup('aliyun-sms');
    const id = await sent(tenant.id, provider.id, '900619736562481537^0');
    const answer = await push(path, aliyunPush('900619736562481537^0'));
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toEqual({ code: 0, msg: '接收成功' });
    const view = (await t.call(tenant.apiKey, 'GET', `/v1/messages/${id}`)).json();
    expect(view.status).toBe('delivered');
    expect(view.receipt).toEqual({ status: 'delivered', code: 'DELIVERED', at: '2026-12-01T15:00:03.000Z' });
    expect((await push(path, aliyunPush('900619736562481537^0', false))).json()).toEqual({ code: 0, msg: '接收成功' });
    expect((await t.call(tenant.apiKey, 'GET', `/v1/messages/${id}`)).json().status).toBe('delivered');
  });

  it('Tencent: a report before the settle waits and is applied by it; FAIL is undelivered', async () => {
    const { tenant, provider, token } = await setup('tencent-sms');
    const path = `/v1/receipts/${provider.id}`;
    const early = await push(path, tencentPush('sid-early', 'FAIL'), { 'sluice-receipt-token': token });
    expect(early.json()).toEqual({ result: 0, errmsg: 'OK' });
    const id = await sent(tenant.id, provider.id, 'sid-early');
    const view = (await t.call(tenant.apiKey, 'GET', `/v1/messages/${id}`)).json();
    expect(view).toMatchObject({
      status: 'undelivered',
      receipt: { status: 'undelivered', code: 'UNDELIV', at: '2015-10-17T00:03:04.000Z' },
    });
  });

  it("refuses a wrong or missing token and another provider's token (401), a body that is no array (400), never a 5xx", async () => {
    const a = await setup('aliyun-sms');
    const b = await setup('aliyun-sms');
    const id = await sent(a.tenant.id, a.provider.id, 'biz-a');
    expect((await push(`/v1/receipts/${a.provider.id}?token=wrong`, aliyunPush('biz-a'))).statusCode).toBe(401);
    expect((await push(`/v1/receipts/${a.provider.id}`, aliyunPush('biz-a'))).statusCode).toBe(401);
    expect((await push(`/v1/receipts/${a.provider.id}?token=${b.token}`, aliyunPush('biz-a'))).statusCode).toBe(401);
    expect((await push(`/v1/receipts/unknown?token=${a.token}`, aliyunPush('biz-a'))).statusCode).toBe(401);
    // B's provider with B's token naming A's vendor id: waits as unknown, never touches A's message.
    expect((await push(b.path, aliyunPush('biz-a'))).statusCode).toBe(200);
    expect((await t.call(a.tenant.apiKey, 'GET', `/v1/messages/${id}`)).json().status).toBe('sent');
    expect((await push(a.path, { biz_id: 'biz-a' })).statusCode).toBe(400);
    const garbage = await push(a.path, [null, 7, { biz_id: 'biz-a' }, { success: true }]);
    expect(garbage.statusCode).toBe(200);
    expect((await t.call(a.tenant.apiKey, 'GET', `/v1/messages/${id}`)).json().status).toBe('sent');
    const broken = await t.app.inject({
      method: 'POST',
      url: a.path,
      headers: { 'content-type': 'application/json' },
      payload: '[{"biz_id":',
    });
    expect(broken.statusCode).toBe(400);
  });

  it('applies every entry of a push, however many the body limit lets in: 10,500 in, 10,500 stored', async () => {
    const { provider, path } = await setup('aliyun-sms');
    const reports = Array.from({ length: 10_500 }, (_, i) => ({ biz_id: `many-${i}`, success: i % 2 === 0, err_code: 'DELIVERED' }));
    const answer = await push(path, [...reports, null]);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toEqual({ code: 0, msg: '接收成功' });
    const waiting = await t.runtime.database.db
      .selectFrom('pending_receipts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('provider_id', '=', provider.id)
      .executeTakeFirstOrThrow();
    expect(Number(waiting.n)).toBe(10_500);
    const counted = (await t.runtime.metrics.registry.getSingleMetric('sluice_receipts_total')?.get())?.values ?? [];
    const of = (outcome: string) =>
      counted.filter((v) => v.labels.provider === provider.name && v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
    expect(of('pending')).toBe(10_500);
    expect(of('unreadable')).toBe(1);
  });

  it('issues tokens only for providers that push receipts', async () => {
    const tenant = await t.createTenant();
    const console = await t.runtime.repositories.providers.create({
      scope: tenant.id,
      channel: 'sms',
      kind: 'console',
      name: 'c',
      qps: 1,
      config: {},
    });
    expect((await t.admin('POST', `/v1/admin/providers/${console.id}/receipt-token`)).statusCode).toBe(400);
    expect((await t.admin('POST', '/v1/admin/providers/unknown/receipt-token')).statusCode).toBe(404);
  });
});

import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { aliyunPercentEncode, aliyunSignature, aliyunStringToSign } from '../../src/providers/aliyun-signature.js';
import { createAliyunSmsProvider } from '../../src/providers/aliyun-sms.js';
import { isProviderError, type OutboundMessage, type ProviderError } from '../../src/providers/provider.js';
import { type LocalHttpServer, type RecordedRequest, rejectionOf, startLocalHttpServer } from './local-http-server.js';

describe('Aliyun RPC signature against published examples', () => {
  // Aliyun's RPC signature documentation ("Request syntax and signature method V2 for RPC APIs",
  // help.aliyun.com/document_detail/25490 and its older ECS copy): DescribeRegions, AccessKeyId
  // testid, AccessKeySecret testsecret. The current text spells the parameter `Timestamp` and gives
  // OLeaidS1JvxuMvnyHOwuJ+uX5qY=; the older text spells it `TimeStamp` and gives CT9X0VtwR86fNWSnsc6v8YGOjuE=
  // (that page prints its StringToSign with literal `&` between pairs, a typo: the signature it
  // prints is the one of the %26 form below).
  const describeRegions = (timestampName: string) => ({
    AccessKeyId: 'testid',
    Action: 'DescribeRegions',
    Format: 'XML',
    SignatureMethod: 'HMAC-SHA1',
    SignatureNonce: '3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf',
    SignatureVersion: '1.0',
    [timestampName]: '2016-02-23T12:46:24Z',
    Version: '2014-05-26',
  });

  it('reproduces the DescribeRegions StringToSign and signature (Timestamp)', () => {
    expect(aliyunStringToSign('GET', describeRegions('Timestamp'))).toBe(
      'GET&%2F&AccessKeyId%3Dtestid%26Action%3DDescribeRegions%26Format%3DXML%26SignatureMethod%3DHMAC-SHA1' +
        '%26SignatureNonce%3D3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf%26SignatureVersion%3D1.0' +
        '%26Timestamp%3D2016-02-23T12%253A46%253A24Z%26Version%3D2014-05-26',
    );
    expect(aliyunSignature('GET', describeRegions('Timestamp'), 'testsecret')).toBe('OLeaidS1JvxuMvnyHOwuJ+uX5qY=');
  });

  it('reproduces the older DescribeRegions example (TimeStamp)', () => {
    expect(aliyunSignature('GET', describeRegions('TimeStamp'), 'testsecret')).toBe('CT9X0VtwR86fNWSnsc6v8YGOjuE=');
  });

  it('reproduces the SMS documentation SendSms example (Chinese SignName, JSON TemplateParam)', () => {
    // Aliyun SMS "HTTP protocol and signature" example: AccessKeySecret testSecret.
    const params = {
      AccessKeyId: 'testId',
      Action: 'SendSms',
      Format: 'XML',
      OutId: '123',
      PhoneNumbers: '15300000001',
      RegionId: 'cn-hangzhou',
      SignName: '阿里云短信测试专用',
      SignatureMethod: 'HMAC-SHA1',
      SignatureNonce: '45e25e9b-0a6f-4070-8c85-2956eda1b466',
      SignatureVersion: '1.0',
      TemplateCode: 'SMS_71390007',
      TemplateParam: '{"customer":"test"}',
      Timestamp: '2017-07-12T02:42:19Z',
      Version: '2017-05-25',
    };
    expect(aliyunSignature('GET', params, 'testSecret')).toBe('zJDF+Lrzhj/ThnlvIToysFRq6t4=');
  });

  it('percent-encodes by Aliyun rules: only A-Z a-z 0-9 - _ . ~ stay literal', () => {
    expect(aliyunPercentEncode("a b*c~d!e'f(g)h/i+j=k&")).toBe('a%20b%2Ac~d%21e%27f%28g%29h%2Fi%2Bj%3Dk%26');
    expect(aliyunPercentEncode('短')).toBe('%E7%9F%AD');
  });
});

// ---------------------------------------------------------------------------------------------
// An Aliyun stand-in that checks signatures with its own implementation of the documented algorithm.
// ---------------------------------------------------------------------------------------------

const ACCESS_KEY_ID = 'LTAI-test-id';
const ACCESS_KEY_SECRET = 'aliyun-secret-for-tests';

/** RFC 3986 byte by byte, unreserved = A-Z a-z 0-9 - _ . ~ (written apart from the provider's encoder). */
function documentedEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function parseForm(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of body.split('&')) {
    const eq = pair.indexOf('=');
    out[decodeURIComponent(pair.slice(0, eq))] = decodeURIComponent(pair.slice(eq + 1));
  }
  return out;
}

function verifyAliyunRequest(request: RecordedRequest, secret: string): { ok: boolean; params: Record<string, string> } {
  const params = parseForm(request.body);
  const { Signature: signature, ...rest } = params;
  const canonical = Object.keys(rest)
    .sort()
    .map((k) => `${documentedEncode(k)}=${documentedEncode(rest[k] ?? '')}`)
    .join('&');
  const stringToSign = `${request.method}&${documentedEncode('/')}&${documentedEncode(canonical)}`;
  const expected = createHmac('sha1', `${secret}&`).update(stringToSign, 'utf8').digest('base64');
  return { ok: signature === expected, params };
}

describe('Aliyun SendSms against a local stand-in', () => {
  let server: LocalHttpServer;
  const clock = new ManualClock(Date.UTC(2024, 4, 6, 7, 8, 9, 123));
  const message: OutboundMessage = {
    id: 'msg-01HZX',
    tenantId: 't1',
    channel: 'sms',
    to: '+8613812340000',
    template: 'SMS_123',
    params: { code: '12 34*~', name: '张三' },
  };
  const provider = (secret = ACCESS_KEY_SECRET) =>
    createAliyunSmsProvider({
      id: 'aliyun-main',
      channel: 'sms',
      accessKeyId: ACCESS_KEY_ID,
      accessKeySecret: secret,
      signName: '阿里云短信测试',
      endpoint: server.url,
      timeoutMs: 5_000,
      clock,
    });

  /** Verifies, then answers like Aliyun: a bad signature is SignatureDoesNotMatch, else `answer`. */
  const aliyunAnswers = (answer: object, status = 200) =>
    server.answer((request) => {
      const { ok } = verifyAliyunRequest(request, ACCESS_KEY_SECRET);
      if (!ok)
        return {
          status: 400,
          body: { Code: 'SignatureDoesNotMatch', Message: 'Specified signature is not matched with our calculation.' },
        };
      return { status, body: answer };
    });

  beforeAll(async () => {
    server = await startLocalHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('sends a correctly signed SendSms and returns the BizId', async () => {
    aliyunAnswers({ Code: 'OK', Message: 'OK', BizId: '900619746936498440^0', RequestId: 'F655A8D5' });
    const result = await provider().send(message);
    expect(result).toEqual({ providerMessageId: '900619746936498440^0' });

    const request = server.requests.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const { ok, params } = verifyAliyunRequest(request, ACCESS_KEY_SECRET);
    expect(ok).toBe(true);
    expect(params).toMatchObject({
      Action: 'SendSms',
      Version: '2017-05-25',
      Format: 'JSON',
      AccessKeyId: ACCESS_KEY_ID,
      SignatureMethod: 'HMAC-SHA1',
      SignatureVersion: '1.0',
      Timestamp: '2024-05-06T07:08:09Z',
      PhoneNumbers: '8613812340000',
      SignName: '阿里云短信测试',
      TemplateCode: 'SMS_123',
      OutId: 'msg-01HZX',
    });
    expect(JSON.parse(params.TemplateParam ?? '')).toEqual({ code: '12 34*~', name: '张三' });
  });

  it("sends a stored template through its Aliyun entry's TemplateCode and SignName (by kind, or by provider id first)", async () => {
    aliyunAnswers({ Code: 'OK', Message: 'OK', BizId: 'b-1', RequestId: 'r' });
    const stored: OutboundMessage = {
      ...message,
      template: undefined,
      params: { code: '1234' },
      body: 'Your code is 1234',
      vendor: { 'aliyun-sms': { templateCode: 'SMS_KIND', signName: '商城' }, 'tencent-sms': { templateCode: '1001' } },
    };
    await provider().send(stored);
    let { ok, params } = verifyAliyunRequest(server.requests.at(-1)!, ACCESS_KEY_SECRET);
    expect(ok).toBe(true);
    expect(params).toMatchObject({ TemplateCode: 'SMS_KIND', SignName: '商城' });
    expect(JSON.parse(params.TemplateParam ?? '')).toEqual({ code: '1234' });

    await provider().send({ ...stored, vendor: { ...stored.vendor, 'aliyun-main': { templateCode: 'SMS_ID' } } });
    ({ ok, params } = verifyAliyunRequest(server.requests.at(-1)!, ACCESS_KEY_SECRET));
    expect(ok).toBe(true);
    expect(params).toMatchObject({ TemplateCode: 'SMS_ID', SignName: '阿里云短信测试' });
  });

  it('uses a fresh SignatureNonce per request', async () => {
    aliyunAnswers({ Code: 'OK', BizId: 'b' });
    await provider().send(message);
    await provider().send(message);
    const [a, b] = server.requests.slice(-2).map((r) => parseForm(r.body).SignatureNonce);
    expect(a).toBeTruthy();
    expect(a).not.toBe(b);
  });

  it('is rejected by the stand-in when signed with the wrong secret: permanent', async () => {
    aliyunAnswers({ Code: 'OK', BizId: 'never' });
    const error = (await rejectionOf(provider('wrong-secret').send(message))) as ProviderError;
    expect(isProviderError(error)).toBe(true);
    expect(error.code).toBe('SignatureDoesNotMatch');
    expect(error.retryable).toBe(false);
  });

  it.each([
    ['isv.BUSINESS_LIMIT_CONTROL', '触发小时级流控Permits:5', 200, true],
    ['Throttling.User', 'Request was denied due to user flow control.', 400, true],
    ['isp.SYSTEM_ERROR', 'isp.SYSTEM_ERROR', 200, true],
    ['isv.MOBILE_NUMBER_ILLEGAL', '非法手机号 8613812340000', 200, false],
    ['isv.SMS_TEMPLATE_ILLEGAL', '模板不合法', 200, false],
    ['isv.AMOUNT_NOT_ENOUGH', '账户余额不足', 200, false],
  ])('classifies %s as retryable=%s', async (code, vendorMessage, status, retryable) => {
    aliyunAnswers({ Code: code, Message: vendorMessage, RequestId: 'r' }, status);
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.message).toContain('+86138****0000');
    expect(error.message).not.toContain('13812340000');
    expect(error.message).not.toContain(ACCESS_KEY_SECRET);
  });

  it('treats a non-JSON 503 from a proxy as retryable, a non-JSON 404 as permanent', async () => {
    server.answer(() => ({ status: 503, body: '<html>busy</html>', headers: { 'retry-after': '7' } }));
    const busy = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([busy.code, busy.retryable, busy.retryAfterMs]).toEqual(['HTTP_503', true, 7000]);
    server.answer(() => ({ status: 404, body: 'not here' }));
    const missing = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([missing.code, missing.retryable]).toEqual(['HTTP_404', false]);
  });

  it('refuses a message without a template, without calling Aliyun', async () => {
    const before = server.requests.length;
    const error = (await rejectionOf(provider().send({ ...message, template: undefined }))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['NO_TEMPLATE', false]);
    expect(server.requests.length).toBe(before);
  });
});

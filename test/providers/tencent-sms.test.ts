import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import type { OutboundMessage, ProviderError } from '../../src/providers/provider.js';
import { tc3Sign } from '../../src/providers/tencent-signature.js';
import { createTencentSmsProvider } from '../../src/providers/tencent-sms.js';
import { type LocalHttpServer, type RecordedRequest, rejectionOf, startLocalHttpServer } from './local-http-server.js';

describe('TC3-HMAC-SHA256 against Tencent Cloud published examples', () => {
  // Tencent Cloud "Signature v3" (cloud.tencent.com/document/api/213/30654), CVM DescribeInstances,
  // timestamp 1551113065 (2019-02-25 UTC). The payload is printed verbatim in the doc, \u escapes included.
  const payload = '{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}';
  const base = {
    service: 'cvm',
    host: 'cvm.tencentcloudapi.com',
    contentType: 'application/json; charset=utf-8',
    timestamp: 1551113065,
    payload,
  };

  it('reproduces the 2019 edition: SecretKey Gu5t9xGARNpq86cd98joQYCN3EXAMPLE, SignedHeaders content-type;host', () => {
    const signed = tc3Sign({ ...base, secretId: 'AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE', secretKey: 'Gu5t9xGARNpq86cd98joQYCN3EXAMPLE' });
    expect(signed.canonicalRequest).toBe(
      'POST\n/\n\ncontent-type:application/json; charset=utf-8\nhost:cvm.tencentcloudapi.com\n\ncontent-type;host\n' +
        '35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064',
    );
    expect(signed.stringToSign).toBe(
      'TC3-HMAC-SHA256\n1551113065\n2019-02-25/cvm/tc3_request\n5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031',
    );
    expect(signed.signature).toBe('72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168');
    expect(signed.authorization).toBe(
      'TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE/2019-02-25/cvm/tc3_request, SignedHeaders=content-type;host, ' +
        'Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168',
    );
  });

  it('reproduces the current edition: x-tc-action signed, SecretKey of 32 asterisks, signature 10b1a37a…', () => {
    // The current page masks the key as 32 `*`; the published SecretDate (da98fb70…) is HMAC("TC3" + that, date),
    // so the mask is the key. With Gu5t9x…EXAMPLE this request signs differently (644be983…): the brief's
    // pairing of that key with 10b1a37a… mixes the two editions.
    const signed = tc3Sign({
      ...base,
      action: 'DescribeInstances',
      secretId: 'AKID********************************',
      secretKey: '*'.repeat(32),
    });
    expect(signed.signedHeaders).toBe('content-type;host;x-tc-action');
    expect(signed.stringToSign).toBe(
      'TC3-HMAC-SHA256\n1551113065\n2019-02-25/cvm/tc3_request\n7019a55be8395899b900fb5564e4200d984910f34794a27cb3fb7d10ff6a1e84',
    );
    expect(signed.signature).toBe('10b1a37a7301a02ca19a647ad722d5e43b4b3cff309d421d85b46093f6ab6c4f');
  });

  it('dates the credential scope in UTC, not local time', () => {
    const justBefore = tc3Sign({ ...base, timestamp: Date.UTC(2024, 0, 1, 23, 59, 59) / 1000, secretId: 'id', secretKey: 'k' });
    const justAfter = tc3Sign({ ...base, timestamp: Date.UTC(2024, 0, 2, 0, 0, 0) / 1000, secretId: 'id', secretKey: 'k' });
    expect(justBefore.credentialScope).toBe('2024-01-01/cvm/tc3_request');
    expect(justAfter.credentialScope).toBe('2024-01-02/cvm/tc3_request');
  });
});

// ---------------------------------------------------------------------------------------------
// A Tencent stand-in that verifies TC3 with its own implementation of the documented algorithm.
// ---------------------------------------------------------------------------------------------

const SECRET_ID = 'AKID-test-0001';
const SECRET_KEY = 'tencent-secret-for-tests';

function verifyTc3(request: RecordedRequest, secretKey: string): { ok: boolean; reason?: string } {
  const auth =
    /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/([a-z]+)\/tc3_request, SignedHeaders=([a-z;-]+), Signature=([0-9a-f]{64})$/.exec(
      String(request.headers.authorization),
    );
  if (!auth) return { ok: false, reason: 'malformed Authorization' };
  const [, secretId, date, service, signedHeaders, signature] = auth as unknown as [string, string, string, string, string, string];
  if (secretId !== SECRET_ID) return { ok: false, reason: 'unknown SecretId' };
  const timestamp = Number(request.headers['x-tc-timestamp']);
  if (new Date(timestamp * 1000).toISOString().slice(0, 10) !== date) return { ok: false, reason: 'date does not match X-TC-Timestamp' };
  const names = signedHeaders.split(';');
  if (!names.includes('content-type') || !names.includes('host')) return { ok: false, reason: 'content-type and host must be signed' };
  const canonicalHeaders = names.map((name) => `${name}:${String(request.headers[name]).trim().toLowerCase()}\n`).join('');
  const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
  const canonicalRequest = `${request.method}\n${request.path}\n\n${canonicalHeaders}\n${signedHeaders}\n${hash(request.body)}`;
  const stringToSign = `TC3-HMAC-SHA256\n${timestamp}\n${date}/${service}/tc3_request\n${hash(canonicalRequest)}`;
  const kDate = createHmac('sha256', `TC3${secretKey}`).update(date).digest();
  const kService = createHmac('sha256', kDate).update(service).digest();
  const kSigning = createHmac('sha256', kService).update('tc3_request').digest();
  const expected = createHmac('sha256', kSigning).update(stringToSign).digest('hex');
  return expected === signature ? { ok: true } : { ok: false, reason: 'signature mismatch' };
}

describe('Tencent SendSms against a local stand-in', () => {
  let server: LocalHttpServer;
  const clock = new ManualClock(1_714_979_289_500); // 2024-05-06T07:08:09.500Z
  const message: OutboundMessage = {
    id: 'msg-tc-1',
    tenantId: 't1',
    channel: 'sms',
    to: '+8613812340000',
    template: '1110',
    params: { code: '4321', minutes: '5' },
  };
  const provider = (secretKey = SECRET_KEY) =>
    createTencentSmsProvider({
      id: 'tencent-main',
      channel: 'sms',
      secretId: SECRET_ID,
      secretKey,
      sdkAppId: '1400006666',
      signName: '腾讯云',
      region: 'ap-beijing',
      endpoint: server.url,
      timeoutMs: 5_000,
      clock,
    });

  const statusAnswer = (code: string, messageText: string) => ({
    Response: {
      SendStatusSet: [
        {
          SerialNo: code === 'Ok' ? '5000:1045710669157053657849499619' : '',
          PhoneNumber: '+8613812340000',
          Fee: 1,
          SessionContext: 'msg-tc-1',
          Code: code,
          Message: messageText,
          IsoCode: 'CN',
        },
      ],
      RequestId: 'a0aabda6-cf91-4f3e-a81f-9198114a2279',
    },
  });

  /** Verifies TC3, then answers like Tencent (always HTTP 200, errors in Response.Error). */
  const tencentAnswers = (answer: object) =>
    server.answer((request) => {
      const verdict = verifyTc3(request, SECRET_KEY);
      if (!verdict.ok)
        return { body: { Response: { Error: { Code: 'AuthFailure.SignatureFailure', Message: verdict.reason }, RequestId: 'x' } } };
      return { body: answer };
    });

  beforeAll(async () => {
    server = await startLocalHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('sends a TC3-signed SendSms with the injected clock and returns the SerialNo', async () => {
    tencentAnswers(statusAnswer('Ok', 'send success'));
    const result = await provider().send(message);
    expect(result).toEqual({ providerMessageId: '5000:1045710669157053657849499619' });

    const request = server.requests.at(-1)!;
    expect(verifyTc3(request, SECRET_KEY)).toEqual({ ok: true });
    expect(request.headers).toMatchObject({
      'x-tc-action': 'SendSms',
      'x-tc-version': '2021-01-11',
      'x-tc-timestamp': '1714979289',
      'x-tc-region': 'ap-beijing',
      'content-type': 'application/json; charset=utf-8',
    });
    expect(String(request.headers.authorization)).toContain(`Credential=${SECRET_ID}/2024-05-06/sms/tc3_request`);
    expect(JSON.parse(request.body)).toEqual({
      PhoneNumberSet: ['+8613812340000'],
      SmsSdkAppId: '1400006666',
      SignName: '腾讯云',
      TemplateId: '1110',
      TemplateParamSet: ['4321', '5'],
      SessionContext: 'msg-tc-1',
    });
  });

  it('sends a stored template through its Tencent entry: TemplateId, SignName, params in paramOrder', async () => {
    tencentAnswers(statusAnswer('Ok', 'send success'));
    await provider().send({
      ...message,
      template: undefined,
      params: { code: '4321', minutes: '5' },
      vendor: {
        'aliyun-sms': { templateCode: 'SMS_1' },
        'tencent-sms': { templateCode: '2002', signName: '商城', paramOrder: ['minutes', 'code'] },
      },
    });
    const request = server.requests.at(-1)!;
    expect(verifyTc3(request, SECRET_KEY)).toEqual({ ok: true });
    expect(JSON.parse(request.body)).toMatchObject({ TemplateId: '2002', SignName: '商城', TemplateParamSet: ['5', '4321'] });
  });

  it('signs with whatever the clock says', async () => {
    tencentAnswers(statusAnswer('Ok', 'send success'));
    clock.advance(86_400_000);
    await provider().send(message);
    const request = server.requests.at(-1)!;
    expect(request.headers['x-tc-timestamp']).toBe('1715065689');
    expect(String(request.headers.authorization)).toContain('/2024-05-07/sms/tc3_request');
    expect(verifyTc3(request, SECRET_KEY).ok).toBe(true);
  });

  it('is rejected by the stand-in when signed with the wrong key: permanent', async () => {
    tencentAnswers(statusAnswer('Ok', 'send success'));
    const error = (await rejectionOf(provider('wrong-key').send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['AuthFailure.SignatureFailure', false]);
  });

  it.each([
    ['LimitExceeded.PhoneNumberThirtySecondLimit', true],
    ['LimitExceeded.PhoneNumberDailyLimit', true],
    ['InvalidParameterValue.IncorrectPhoneNumber', false],
    ['FailedOperation.TemplateIncorrectOrUnapproved', false],
  ])('classifies a per-number %s as retryable=%s', async (code, retryable) => {
    tencentAnswers(statusAnswer(code, 'the number +8613812340000 was refused'));
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual([code, retryable]);
    expect(error.message).toContain('+86138****0000');
    expect(error.message).not.toContain('13812340000');
  });

  it.each([
    ['RequestLimitExceeded', true],
    ['InternalError.Timeout', true],
    ['UnauthorizedOperation.SmsSdkAppIdVerifyFail', false],
  ])('classifies a request-level %s as retryable=%s', async (code, retryable) => {
    tencentAnswers({ Response: { Error: { Code: code, Message: 'm' }, RequestId: 'r' } });
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual([code, retryable]);
  });

  it('treats a 502 HTML page from a proxy as retryable', async () => {
    server.answer(() => ({ status: 502, body: '<html>bad gateway</html>' }));
    const error = (await rejectionOf(provider().send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['HTTP_502', true]);
  });
});

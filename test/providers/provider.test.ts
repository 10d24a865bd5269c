import { describe, expect, it } from 'vitest';
import { isAliyunProviderFault } from '../../src/providers/aliyun-sms.js';
import { isFeishuProviderFault } from '../../src/providers/feishu.js';
import { httpStatusError, isRetryableHttpStatus, ProviderError, parseRetryAfter, toProviderError } from '../../src/providers/provider.js';
import { isTencentProviderFault } from '../../src/providers/tencent-sms.js';

describe('HTTP classification', () => {
  it.each([
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [413, false],
    [422, false],
    [408, true],
    [425, true],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
  ])('HTTP %i retryable=%s', (status, retryable) => {
    expect(isRetryableHttpStatus(status)).toBe(retryable);
    expect(httpStatusError('p', status).retryable).toBe(retryable);
  });

  it.each([
    [301, true],
    [302, true],
    [401, true],
    [403, true],
    [404, true],
    [407, true],
    [410, true],
    [400, false],
    [413, false],
    [422, false],
    [429, false],
    [503, false],
  ])('HTTP %i is a fault of the provider itself (fails over): %s', (status, fault) => {
    expect(httpStatusError('p', status).providerFault).toBe(fault);
  });

  it.each([
    [isAliyunProviderFault, 'InvalidAccessKeyId.NotFound', true],
    [isAliyunProviderFault, 'SignatureDoesNotMatch', true],
    [isAliyunProviderFault, 'isv.AMOUNT_NOT_ENOUGH', true],
    [isAliyunProviderFault, 'isv.MOBILE_NUMBER_ILLEGAL', false],
    [isAliyunProviderFault, 'isv.BUSINESS_LIMIT_CONTROL', false],
    [isTencentProviderFault, 'AuthFailure.SignatureFailure', true],
    [isTencentProviderFault, 'UnauthorizedOperation.SmsSdkAppIdVerifyFail', true],
    [isTencentProviderFault, 'FailedOperation.InsufficientBalanceInSmsPackage', true],
    [isTencentProviderFault, 'InvalidParameterValue.IncorrectPhoneNumber', false],
  ] as const)('%o: vendor code %s is a provider fault: %s', (classify, code, fault) => {
    expect(classify(code)).toBe(fault);
  });

  it('Feishu: a refused signature, IP or keyword is the bot, not the message', () => {
    expect([19021, 19022, 19024].map(isFeishuProviderFault)).toEqual([true, true, true]);
    expect(isFeishuProviderFault(9499)).toBe(false);
  });

  it('reads Retry-After in seconds and as an HTTP date', () => {
    const now = Date.UTC(2024, 0, 1, 0, 0, 0);
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter(new Date(now - 90_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('bounds vendor text in messages', () => {
    const error = httpStatusError('p', 500, { detail: 'x'.repeat(5_000) });
    expect(error.message.length).toBeLessThan(300);
  });
});

describe('toProviderError', () => {
  const context = { timeoutMs: 1_000 };

  it('passes ProviderErrors through untouched', () => {
    const original = new ProviderError('no', { retryable: false, code: 'X' });
    expect(toProviderError('p', original, context)).toBe(original);
  });

  it('makes timeouts, aborts and network failures retryable', () => {
    expect(toProviderError('p', new DOMException('t', 'TimeoutError'), context)).toMatchObject({ retryable: true, code: 'TIMEOUT' });
    expect(toProviderError('p', new DOMException('a', 'AbortError'), context)).toMatchObject({ retryable: true, code: 'ABORTED' });
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const converted = toProviderError('p', refused, context);
    expect(converted).toMatchObject({ retryable: true, code: 'NETWORK' });
    expect(converted.message).toContain('ECONNREFUSED');
    expect(converted.cause).toBe(refused);
  });
});

import { describe, expect, it } from 'vitest';
import {
  httpStatusError,
  isRetryableHttpStatus,
  ProviderError,
  parseRetryAfter,
  toProviderError,
} from '../../../src/delivery/providers/provider.js';

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

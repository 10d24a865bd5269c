import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/delivery/attempt.js';

describe('retry backoff (full jitter)', () => {
  it('is uniform in [1, min(max, base·2^(attempt−1))]', () => {
    expect(retryDelayMs(1, 1000, 300_000, () => 0.999_999)).toBe(1000);
    expect(retryDelayMs(3, 1000, 300_000, () => 0.999_999)).toBe(4000);
    expect(retryDelayMs(3, 1000, 300_000, () => 0.5)).toBe(2000);
    expect(retryDelayMs(20, 1000, 300_000, () => 0.999_999)).toBe(300_000);
    expect(retryDelayMs(200, 1000, 300_000, () => 0.5)).toBe(150_000);
    expect(retryDelayMs(2, 1000, 300_000, () => 0)).toBe(1);
  });
});

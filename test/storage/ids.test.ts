import { describe, expect, it } from 'vitest';
import { newMessageId, SHARD_COUNT, shardOf, timeOfId } from '../../src/storage/ids.js';

describe('newMessageId', () => {
  it('is 26 Crockford base32 characters carrying its time', () => {
    const id = newMessageId(1_700_000_000_123);
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(timeOfId(id)).toBe(1_700_000_000_123);
  });

  it('sorts by time, and strictly increases within one millisecond and when the clock steps back', () => {
    const ids = [newMessageId(2_000_000_000_000)];
    for (let i = 0; i < 1000; i++) ids.push(newMessageId(2_000_000_000_000));
    ids.push(newMessageId(1_999_999_999_000)); // clock stepped back: still after the previous ids
    ids.push(newMessageId(2_000_000_000_001));
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('rejects times that do not fit 48 bits', () => {
    expect(() => newMessageId(-1)).toThrow(RangeError);
    expect(() => newMessageId(2 ** 48)).toThrow(RangeError);
  });
});

describe('shardOf', () => {
  it('is stable and spreads ids over all shards', () => {
    expect(shardOf('01HZZZZZZZZZZZZZZZZZZZZZZZ')).toBe(shardOf('01HZZZZZZZZZZZZZZZZZZZZZZZ'));
    const counts = new Array<number>(SHARD_COUNT).fill(0);
    for (let i = 0; i < 20_000; i++) counts[shardOf(newMessageId())]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThan(60); // mean ≈ 19.5
  });
});

/**
 * The rules dry run against hand-computed expectations: the replay starts at the injected time,
 * each send is decided at its offset, and nothing outlives the call.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/index.js';
import { AdminLookups } from '../../src/services/admin-lookup-service.js';
import { replaySends } from '../../src/services/rules-preview.js';

const at = (...offsets: number[]) => offsets.map((atMs) => ({ atMs }));

describe('replaySends', () => {
  it('3 per minute with a 600 s ban: sends at 0, 1, 2, 3 and 60,000 ms pass three times, then RATE_LIMITED, then BANNED', async () => {
    const results = await replaySends([{ windowMs: 60_000, limit: 3, banMs: 600_000 }], at(0, 1, 2, 3, 60_000), 1_700_000_000_000);
    expect(results).toEqual([
      { atMs: 0, allowed: true, counts: [0] },
      { atMs: 1, allowed: true, counts: [1] },
      { atMs: 2, allowed: true, counts: [2] },
      // The ban (600 s) outlasts the window's own wait (the first send leaves at 60,000 ms: 59,997 ms).
      { atMs: 3, allowed: false, code: 'RATE_LIMITED', retryAfterMs: 600_000, rule: 0, counts: [3] },
      // Banned at 3 ms until 600,003 ms.
      { atMs: 60_000, allowed: false, code: 'BANNED', retryAfterMs: 540_003, counts: [] },
    ]);
  });

  it('without a ban a refused send is not counted, and the window slides: 2 per second', async () => {
    const results = await replaySends([{ windowMs: 1000, limit: 2 }], at(0, 400, 800, 999, 1000, 1400), 0);
    expect(results.map((result) => [result.atMs, result.code ?? 'OK', result.retryAfterMs ?? 0])).toEqual([
      [0, 'OK', 0],
      [400, 'OK', 0],
      // The entry at 0 leaves the window (t − 1000, t] at 1000.
      [800, 'RATE_LIMITED', 200],
      [999, 'RATE_LIMITED', 1],
      [1000, 'OK', 0],
      // 400 leaves at 1400: the window (400, 1400] holds 1000 only.
      [1400, 'OK', 0],
    ]);
  });

  it('names the first rule hit and keeps counting the others', async () => {
    const rules = [
      { windowMs: 3_600_000, limit: 10 },
      { windowMs: 60_000, limit: 1 },
    ];
    const [, second] = await replaySends(rules, at(0, 10), 0);
    expect(second).toEqual({ atMs: 10, allowed: false, code: 'RATE_LIMITED', retryAfterMs: 59_990, rule: 1, counts: [1, 1] });
  });

  it('fixed windows align to the start time it is given', async () => {
    const rules = [{ windowMs: 1000, limit: 1, algorithm: 'fixed-window' as const }];
    // Starting 900 ms into a window, the second send is in the next one.
    expect((await replaySends(rules, at(0, 100), 10_900)).map((result) => result.allowed)).toEqual([true, true]);
    expect((await replaySends(rules, at(0, 100), 10_000)).map((result) => result.allowed)).toEqual([true, false]);
  });

  it('refuses offsets out of order and more than 1000 sends; without rules every send passes', async () => {
    await expect(replaySends([{ windowMs: 1000, limit: 1 }], at(0, 5, 4), 0)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'sends[2].atMs' },
    });
    await expect(replaySends([{ windowMs: 1000, limit: 1 }], at(...new Array(1001).fill(0)), 0)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    expect(await replaySends([], at(0, 0), 0)).toEqual([
      { atMs: 0, allowed: true, counts: [] },
      { atMs: 0, allowed: true, counts: [] },
    ]);
  });
});

describe('AdminLookups.previewRules', () => {
  it('starts the replay at its clock and never touches the live limiter', async () => {
    const clock = new ManualClock(10_000);
    const untouched = () => {
      throw new Error('the dry run must not read live state');
    };
    const service = new AdminLookups({
      tenants: { get: async (id) => (id === 't1' ? ({ id } as never) : undefined) },
      rules: { get: untouched },
      messages: { searchByRecipient: untouched, listRecent: untouched, findById: untouched, listAttempts: untouched },
      webhooks: { list: untouched },
      webhookEvents: { listForMessage: untouched },
      limiter: { peek: untouched },
      clock,
      defaultRegion: 'CN',
    });
    const rules = [{ windowSeconds: 1, limit: 1, algorithm: 'fixed-window' }];
    const answer = await service.previewRules('t1', 'sms', { rules, sends: at(0, 999) });
    expect(answer.results.map((result) => result.allowed)).toEqual([true, false]);
    clock.set(10_500);
    // Half-way into a window now: the second send is in the next one.
    expect((await service.previewRules('t1', 'sms', { rules, sends: at(0, 500) })).results.map((result) => result.allowed)).toEqual([
      true,
      true,
    ]);
    await expect(service.previewRules('t2', 'sms', { rules, sends: at(0) })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(service.previewRules('t1', 'sms', { rules: [{ windowSeconds: 0, limit: 1 }], sends: at(0) })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'rules[0]' },
    });
  });
});

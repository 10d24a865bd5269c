/**
 * The conformance cases of scheduled attempts (`countAt`), part of the suite of conformance.ts:
 * counted at their due time, seen by immediate sends, retried, undone, and never banning the present.
 */
import { expect, it } from 'vitest';
import type { Rule } from '../../src/limiter/types.js';
import { banned, type ConformanceCalls, HOUR, limited, MINUTE, ok, SECOND, SEED_RULES, T0 } from './conformance-support.js';

export function defineScheduledConformance({ check, peek, schedule, undo }: ConformanceCalls): void {
  it('once a scheduled admission is later than the attempt, every window containing it counts, present entries too', async () => {
    const rules: Rule[] = [{ windowMs: 1000, limit: 2 }];
    expect(await check(rules, 500)).toEqual(ok([0], T0 + 500));
    expect(await schedule(rules, 0, 900)).toEqual(ok([1], T0));
    // Nothing at or before 100, but the window (−100, 900] contains 100, 500 and 900.
    expect(await check(rules, 100)).toEqual(limited(0, 600, [2], T0 + 100));
    expect(await check(rules, 1500)).toEqual(ok([1], T0 + 1500));
  });

  it('scheduled sends count at their due time: 3 a minute due at one instant, 3 more later for it are refused', async () => {
    const rules: Rule[] = [{ windowMs: MINUTE, limit: 3 }];
    const due = 140 * SECOND;
    expect(await schedule(rules, 0, due, 'm1')).toEqual(ok([0], T0));
    expect(await schedule(rules, 10, due, 'm2')).toEqual(ok([1], T0 + 10));
    expect(await schedule(rules, 20, due, 'm3')).toEqual(ok([2], T0 + 20));
    // 62 s later the window of the decisions has passed, not the one of the due time.
    expect(await schedule(rules, 62 * SECOND, due, 'm4')).toEqual(limited(0, MINUTE, [3], T0 + 62 * SECOND));
    expect(await schedule(rules, 62 * SECOND, due + 59 * SECOND, 'm5')).toEqual(limited(0, SECOND, [3], T0 + 62 * SECOND));
    // A minute after the due time the window has room again; before it (due − 60 s, due) it has none.
    expect(await schedule(rules, 62 * SECOND, due + MINUTE, 'm6')).toEqual(ok([0], T0 + 62 * SECOND));
    // Decided by the later window (80 s, 140 s]: retryAfterMs is a lower bound (it is 60 s, 119 s is needed).
    expect(await schedule(rules, 62 * SECOND, due - 59 * SECOND, 'm7')).toEqual(limited(0, MINUTE, [3], T0 + 62 * SECOND));
    // An immediate send is in no window with the due time (140 s ahead): admitted.
    expect(await check(rules, 62 * SECOND)).toEqual(ok([0], T0 + 62 * SECOND));
  });

  it('immediate sends see scheduled ones: refused while a window containing a scheduled send is full', async () => {
    const rules: Rule[] = [{ windowMs: MINUTE, limit: 3 }];
    expect(await schedule(rules, 0, 30 * SECOND, 's1')).toEqual(ok([0], T0));
    expect(await check(rules, 0)).toEqual(ok([1], T0));
    expect(await check(rules, 1000)).toEqual(ok([2], T0 + 1000));
    // (−30 s, 30 s] holds 0, 1000 and the scheduled 30 s: a send at 2 s would make it 4. Its own
    // window (−58 s, 2 s] holds 2; retryAfterMs is the later window's lower bound (30 s; 58,001 ms needed).
    expect(await check(rules, 2000)).toEqual(limited(0, 30 * SECOND, [3], T0 + 2000));
    expect(await peek(rules, 2000)).toEqual(limited(0, 30 * SECOND, [3], T0 + 2000));
    expect(await check(rules, 30 * SECOND)).toEqual(limited(0, 30 * SECOND, [3], T0 + 30 * SECOND));
    // Undo of the scheduled one (by its id, at its decision time) gives its slot back at once.
    await undo(rules, 's1', 0);
    expect(await peek(rules, 2000)).toEqual(ok([2], T0 + 2000));
    expect(await check(rules, 30 * SECOND)).toEqual(ok([2], T0 + 30 * SECOND));
    // At 60 s the entry at 0 has left the window; 1000 and 30 s remain.
    expect(await check(rules, MINUTE)).toEqual(ok([2], T0 + MINUTE));
  });

  it('a scheduled send is retried by its id, trimmed by the decision time only, and undone with its counters at the decision time', async () => {
    const rules: Rule[] = [
      { windowMs: 1000, limit: 2 },
      { windowMs: 1000, limit: 5, algorithm: 'fixed-window' },
    ];
    expect(await schedule(rules, 0, 5000, 'x')).toEqual(ok([0, 0], T0));
    // The same id again: a repeat; a check 1000 ms on still finds it (5000 > 1000 − 1000).
    expect(await schedule(rules, 1000, 5000, 'x')).toEqual(ok([1, 0], T0 + 1000));
    // The fixed window counted it at the decision time 0, window 0.
    expect(await peek(rules, 500)).toEqual(ok([0, 1], T0 + 500));
    // A due time already past counts at the decision time.
    expect(await schedule(rules, 600, 0, 'y')).toEqual(ok([0, 1], T0 + 600));
    await undo(rules, 'x', 0);
    expect(await peek(rules, 700)).toEqual(ok([1, 1], T0 + 700));
    expect(await peek(rules, 4500)).toEqual(ok([0, 0], T0 + 4500));
  });

  it("a breach counted at a scheduled time bans nothing: refused with its window's retry, the present stays open", async () => {
    // Three bulk sends held by quiet hours until 9.5 h from now, and a fourth for the same time.
    const due = 9.5 * HOUR;
    expect(await schedule(SEED_RULES, 0, due, 'b1')).toEqual(ok([0, 0, 0], T0));
    expect(await schedule(SEED_RULES, SECOND, due, 'b2')).toEqual(ok([1, 1, 1], T0 + SECOND));
    expect(await schedule(SEED_RULES, 2 * SECOND, due, 'b3')).toEqual(ok([2, 2, 2], T0 + 2 * SECOND));
    // The minute ending at the due time is full: refused, retry when that window has room, no ban.
    expect(await schedule(SEED_RULES, 3 * SECOND, due, 'b4')).toEqual(limited(0, MINUTE, [3, 3, 3], T0 + 3 * SECOND));
    expect(await peek(SEED_RULES, 4 * SECOND)).toEqual(ok([0, 0, 3], T0 + 4 * SECOND));
    // An immediate send is in no minute or hour with the due time (its day holds the three).
    expect(await check(SEED_RULES, 4 * SECOND, 'otp')).toEqual(ok([0, 0, 3], T0 + 4 * SECOND));
    // Decided at the due time (a due time already reached counts at the decision time), the same
    // breach is a present one: it bans from then.
    expect(await schedule(SEED_RULES, due, due, 'b5')).toEqual(limited(0, 10 * MINUTE, [3, 3, 4], T0 + due));
    expect(await check(SEED_RULES, due + 1)).toEqual(banned(10 * MINUTE - 1, T0 + due + 1));
  });

  it('a scheduled attempt refused by a counter rule bans nothing either; a due time already past bans as a present one', async () => {
    const rules: Rule[] = [{ windowMs: MINUTE, limit: 1, banMs: 10 * MINUTE, algorithm: 'fixed-window' }];
    expect(await schedule(rules, 0, HOUR, 'x')).toEqual(ok([0], T0));
    // The counter counted it at its decision time: the present window is full, the retry is its end.
    expect(await schedule(rules, SECOND, HOUR, 'y')).toEqual(limited(0, 59 * SECOND, [1], T0 + SECOND));
    expect(await schedule(rules, 2 * SECOND, 0, 'z')).toEqual(limited(0, 10 * MINUTE, [1], T0 + 2 * SECOND));
    expect(await check(rules, 3 * SECOND)).toEqual(banned(10 * MINUTE - SECOND, T0 + 3 * SECOND));
  });
}

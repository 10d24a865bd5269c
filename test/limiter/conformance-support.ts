/** Times, the seed's rule set and expected decisions shared by the conformance suite's files. */
import type { Decision, Rule } from '../../src/limiter/types.js';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Midnight UTC: a multiple of every window used here, so fixed windows start at T0. */
export const T0 = Date.UTC(2024, 0, 1);

/** The seed's rule set: 1 min 3, 1 h 10, 1 day 50, each banning 10 min. */
export const SEED_RULES: Rule[] = [
  { windowMs: MINUTE, limit: 3, banMs: 10 * MINUTE },
  { windowMs: HOUR, limit: 10, banMs: 10 * MINUTE },
  { windowMs: DAY, limit: 50, banMs: 10 * MINUTE },
];

export const ok = (counts: number[], at: number): Decision => ({ allowed: true, code: 'OK', retryAfterMs: 0, counts, at });
/** A check answered BANNED: no counts (a ban decides alone); a peek's BANNED passes its counts. */
export const banned = (retryAfterMs: number, at: number, counts: number[] = []): Decision => ({
  allowed: false,
  code: 'BANNED',
  retryAfterMs,
  counts,
  at,
});
export const limited = (rule: number, retryAfterMs: number, counts: number[], at: number): Decision => ({
  allowed: false,
  code: 'RATE_LIMITED',
  rule,
  retryAfterMs,
  counts,
  at,
});

/** The calls of one conformance test, on its current subject, at T0 + offset. */
export interface ConformanceCalls {
  check(rules: Rule[], offset: number, requestId?: string): Promise<Decision>;
  peek(rules: Rule[], offset: number): Promise<Decision>;
  /** A check counted at T0 + countAt, decided at T0 + offset (a scheduled send). */
  schedule(rules: Rule[], offset: number, countAt: number, requestId?: string): Promise<Decision>;
  /** Undo by request id of the attempt decided at T0 + at. */
  undo(rules: Rule[], requestId: string, at: number): Promise<void>;
}

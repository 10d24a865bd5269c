/**
 * Rules at the largest parameters a test can fill, and how to fill one subject of each to its
 * largest state: the cases of the state-bytes tests (in process and on Redis), which hold each
 * subject's measured bytes to `riskRuleStateBytes` (src/limiter/events/cost.ts).
 */
import { randomBytes } from 'node:crypto';
import { ruleSubject } from '../../../src/limiter/events/risk-engine.js';
import { normalizeRiskRule, seenFilterSize } from '../../../src/limiter/events/rules.js';
import type { EventOp, EventResult, RiskRule } from '../../../src/limiter/events/types.js';

export const T0 = Date.UTC(2024, 0, 1);
const MINUTE = 60_000;

export type Apply = (ops: readonly EventOp[], now: number) => Promise<EventResult[]>;

export interface WorstState {
  name: string;
  rule: RiskRule;
  /** Subjects filled in process, where the heap is measured over many (enough to drown the noise). */
  inProcess: number;
  /** Fills subject `subject` of the rule to its largest state. */
  fill(apply: Apply, subject: string): Promise<void>;
}

/** `count` ops made by `op`, applied 500 at a time at `now`. */
async function many(apply: Apply, count: number, now: number, op: (i: number) => EventOp): Promise<void> {
  for (let from = 0; from < count; from += 500) {
    await apply(
      Array.from({ length: Math.min(500, count - from) }, (_, i) => op(from + i)),
      now,
    );
  }
}

const rule = (input: Record<string, unknown>) => normalizeRiskRule({ name: 'r', key: ['user'], ...input }, 0);

/** A seen rule's op for `value`. */
function seenOp(seen: Extract<RiskRule, { kind: 'seen' }>, subject: string, value: string): EventOp {
  const { bits, hashes } = seenFilterSize(seen);
  return { kind: 'seen', subject, ...(seen.windowMs === undefined ? {} : { windowMs: seen.windowMs }), bits, hashes, value, record: true };
}

export const WORST_STATES: WorstState[] = [
  {
    name: 'seen, the default filter (1,000 values at 0.001): one key, written in full by its first value',
    inProcess: 2000,
    rule: rule({ kind: 'seen', of: 'device' }),
    async fill(apply, subject) {
      const seen = this.rule as Extract<RiskRule, { kind: 'seen' }>;
      await apply([seenOp(seen, subject, 'd')], T0);
    },
  },
  {
    name: 'seen, 100,000 values at 0.001 over a window: every segment of both generations written',
    inProcess: 10,
    rule: rule({ kind: 'seen', of: 'device', capacity: 100_000, windowMs: MINUTE }),
    async fill(apply, subject) {
      const seen = this.rule as Extract<RiskRule, { kind: 'seen' }>;
      // 49 segments a filter: 2,000 values reach them all (by far).
      for (const generation of [0, 1])
        await many(apply, 2000, T0 + generation * MINUTE, (i) => seenOp(seen, subject, `g${generation}:${i}`));
    },
  },
  {
    name: 'distinct, 10,000 exact values',
    inProcess: 4,
    rule: rule({ kind: 'distinct', of: 'device', windowMs: 10 * MINUTE, limit: 10_000 }),
    async fill(apply, subject) {
      await many(apply, 10_000, T0, (i) => ({
        kind: 'distinct',
        subject,
        windowMs: 10 * MINUTE,
        limit: 10_000,
        value: `d${i}`,
        record: true,
      }));
    },
  },
  {
    name: 'distinct above the exact range: two dense HyperLogLogs',
    inProcess: 20,
    rule: rule({ kind: 'distinct', of: 'device', windowMs: MINUTE, limit: 50_000 }),
    async fill(apply, subject) {
      for (const generation of [0, 1]) {
        await many(apply, 5000, T0 + generation * MINUTE, (i) => ({
          kind: 'distinct',
          subject,
          windowMs: MINUTE,
          limit: 50_000,
          value: `g${generation}:${i}`,
          record: true,
        }));
      }
    },
  },
  {
    name: 'last-n, 1,000 outcomes of 64 characters',
    inProcess: 20,
    rule: rule({ kind: 'last-n', n: 1000, m: 3, outcome: 'failed' }),
    async fill(apply, subject) {
      // One op per call: a call's ops share one time, and each outcome is its own string, as parsed from a request.
      for (let i = 0; i < 1000; i++) {
        await apply([{ kind: 'last-n', subject, n: 1000, m: 3, outcome: 'failed', push: randomBytes(32).toString('hex') }], T0);
      }
    },
  },
  {
    name: 'window kept by the event store: 256 admissions with request ids, then its ban',
    inProcess: 50,
    rule: rule({ kind: 'window', windowMs: 10 * MINUTE, limit: 256, banMs: MINUTE }),
    async fill(apply, subject) {
      for (let i = 0; i <= 256; i++) {
        await apply(
          [{ kind: 'window', subject, windowMs: 10 * MINUTE, limit: 256, banMs: MINUTE, record: true, member: `request-${i}` }],
          T0 + i,
        );
      }
    },
  },
];

/** The subject of a case's rule for one user (as the engine names it). */
export const subjectOf = (scope: string, state: WorstState, user: string) => ruleSubject(scope, state.rule, { user, device: 'd' });

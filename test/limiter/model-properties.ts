/**
 * Property tests shared by every LimiterStore: on random event sequences the store's decisions
 * equal the reference model's, field by field, and sliding-counter stays within its error bound.
 *
 * Every run uses its own random subject prefix and starts after the previous run's last time, so
 * one store (and one shared Redis) serves all runs without runs seeing each other.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Limiter } from '../../src/limiter/limiter.js';
import type { Algorithm, Decision, LimiterStore, Rule } from '../../src/limiter/types.js';
import { ReferenceModel } from './reference-model.js';

export interface ModelPropertiesOptions {
  /** fast-check runs per property; default 150. */
  numRuns?: number;
  /**
   * Whether to run the property whose times go backwards; default true. A store whose cleanup
   * follows the decision times (eviction on a clock that follows them) may forget what an earlier
   * time still counts, as a Redis TTL would: the model does not model cleanup.
   */
  timesGoBack?: boolean;
}

type Operation =
  /** `ahead`: countAt = now + ahead (a scheduled send; negative: a due time already past), or none. */
  | { kind: 'check'; subject: number; dt: number; id: string | undefined; ahead: number | undefined }
  | { kind: 'peek'; subject: number; dt: number }
  /** With an id: undo by request id. Without: undo the `pick`-th anonymous admission still counted (none: skipped). */
  | { kind: 'undo'; subject: number; id: string | undefined; pick: number }
  | { kind: 'ban'; subject: number; dt: number; ms: number }
  | { kind: 'unban'; subject: number }
  | { kind: 'reset'; subject: number };

const SUBJECTS = 3;
const IDS = ['a', 'b', 'c', 'd', 'e', 'f'];

/** Windows chosen so that windows roll within a sequence; 7 and 25 are not multiples of 10, 100/3 is not an integer. */
const ruleArbitrary = (algorithms: readonly Algorithm[]): fc.Arbitrary<Rule> =>
  fc.record({
    algorithm: fc.constantFrom(...algorithms),
    windowMs: fc.constantFrom(7, 25, 60, 100, 250, 1000),
    limit: fc.integer({ min: 1, max: 4 }),
    banMs: fc.constantFrom(0, 0, 0, 40, 300),
  });

/** Time steps: often 0 (equal times), mostly small, sometimes a jump past every window. */
const stepArbitrary = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 10, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 41, max: 1500 }) },
);

/**
 * Steps that also go back (a replay, another host's clock), as far as forward ones go, so time
 * wanders: back into the windows and buckets a counter keeps, past them, and forward into the
 * newer ones again.
 */
const stepBackArbitrary = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 41, max: 1500 }) },
  { weight: 4, arbitrary: fc.integer({ min: -40, max: -1 }) },
  { weight: 1, arbitrary: fc.integer({ min: -1500, max: -41 }) },
);

/** How far ahead a scheduled check counts: mostly within the windows, sometimes past them, or already due. */
const aheadArbitrary = fc.oneof(
  { weight: 1, arbitrary: fc.integer({ min: -30, max: 0 }) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 301, max: 2000 }) },
);

const operationArbitrary = (step: fc.Arbitrary<number>): fc.Arbitrary<Operation> =>
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        kind: fc.constant('check' as const),
        subject: fc.nat(SUBJECTS - 1),
        dt: step,
        id: fc.option(fc.constantFrom(...IDS), { nil: undefined, freq: 2 }),
        ahead: fc.option(aheadArbitrary, { nil: undefined, freq: 2 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('peek' as const), subject: fc.nat(SUBJECTS - 1), dt: step }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('undo' as const),
        subject: fc.nat(SUBJECTS - 1),
        id: fc.option(fc.constantFrom(...IDS), { nil: undefined, freq: 3 }),
        pick: fc.nat(7),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('ban' as const),
        subject: fc.nat(SUBJECTS - 1),
        dt: step,
        ms: fc.integer({ min: 1, max: 400 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('unban' as const), subject: fc.nat(SUBJECTS - 1) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), subject: fc.nat(SUBJECTS - 1) }) },
  );

const EXACT: readonly Algorithm[] = ['sliding-log', 'fixed-window', 'token-bucket'];
const ALL: readonly Algorithm[] = [...EXACT, 'sliding-counter'];

/** Epoch-like times; each run starts well after the previous one ended. */
let nextBase = 1_700_000_000_000 + Math.floor(Math.random() * 1_000_000);

/**
 * Defines `describe(name)` with the model properties, run through `new Limiter({ store })` with
 * explicit `now` on every call. `openStore` is called once per property; `store.close()` after.
 */
export function defineModelProperties(
  name: string,
  openStore: () => Promise<LimiterStore> | LimiterStore,
  options: ModelPropertiesOptions = {},
): void {
  const numRuns = options.numRuns ?? 150;

  const equalsModel =
    (algorithms: readonly Algorithm[], step = stepArbitrary) =>
    async () => {
      const store = await openStore();
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.array(ruleArbitrary(algorithms), { minLength: 1, maxLength: 3 }),
            fc.array(operationArbitrary(step), { maxLength: 40 }),
            (rules, operations) => replayAgainstModel(store, rules, operations),
          ),
          { numRuns },
        );
      } finally {
        await store.close?.();
      }
    };

  describe(name, () => {
    it(
      'exact algorithms (sliding-log, fixed-window, token-bucket) with bans, ids, peeks and undos equal the reference model',
      equalsModel(EXACT),
    );

    it('every algorithm, sliding-counter included, follows the formulas of types.ts as the model does', equalsModel(ALL));

    if (options.timesGoBack !== false) {
      it(
        'with times going backwards, every algorithm keeps and drops state as types.ts says, as the model does',
        equalsModel(ALL, stepBackArbitrary),
      );
    }

    it('sliding-counter count stays within c of the exact count over (t - 10b, t]', async () => {
      const store = await openStore();
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(100, 250, 1000),
            fc.integer({ min: 1, max: 12 }),
            fc.array(stepArbitrary, { minLength: 1, maxLength: 60 }),
            (windowMs, limit, steps) => checkSlidingCounterBound(store, windowMs, limit, steps),
          ),
          { numRuns },
        );
      } finally {
        await store.close?.();
      }
    });
  });
}

/** Runs one sequence through the store and the model; throws at the first difference. */
async function replayAgainstModel(store: LimiterStore, rules: Rule[], operations: Operation[]): Promise<void> {
  const limiter = new Limiter({ store });
  const model = new ReferenceModel();
  const normalized = rules.map((rule) => ({ banMs: 0, algorithm: 'sliding-log' as Algorithm, ...rule }) as Required<Rule>);
  const prefix = `prop:${randomUUID()}:`;
  const subjectOf = (index: number) => `${prefix}${index}`;
  let now = nextBase;
  let latest = now;
  const trace: string[] = [];
  // Per subject, the times of admissions made without an id and not yet undone: an undo without an
  // id may take back only those, each at most once (the caller's promise in types.ts).
  const anonymous = new Map<string, number[]>();
  const anonymousOf = (subject: string) => {
    let times = anonymous.get(subject);
    if (!times) {
      times = [];
      anonymous.set(subject, times);
    }
    return times;
  };
  try {
    for (const operation of operations) {
      const subject = subjectOf(operation.subject);
      if ('dt' in operation) now += operation.dt;
      if (now > latest) latest = now;
      trace.push(
        `${operation.kind} s${operation.subject} t+${now - nextBase}${'id' in operation && operation.id ? ` id=${operation.id}` : ''}${
          'ahead' in operation && operation.ahead !== undefined ? ` countAt=t+${now + operation.ahead - nextBase}` : ''
        }`,
      );
      switch (operation.kind) {
        case 'check': {
          const countAt = operation.ahead === undefined ? undefined : Math.max(0, now + operation.ahead);
          const expected = model.check({ subject, rules: normalized, requestId: operation.id, now, countAt });
          const actual = await limiter.check({
            subject,
            rules,
            requestId: operation.id,
            now,
            ...(countAt === undefined ? {} : { countAt }),
          });
          expectSameDecision(actual, expected, trace);
          if (operation.id === undefined && actual.allowed) anonymousOf(subject).push(actual.at);
          break;
        }
        case 'peek':
          expectSameDecision(await limiter.peek({ subject, rules, now }), model.peek({ subject, rules: normalized, now }), trace);
          break;
        case 'undo': {
          if (operation.id === undefined) {
            const times = anonymousOf(subject);
            if (times.length === 0) break;
            const [at] = times.splice(operation.pick % times.length, 1) as [number];
            trace.push(`  (anonymous, at t+${at - nextBase})`);
            model.undo({ subject, rules: normalized, at });
            await limiter.undo({ subject, rules, at });
            break;
          }
          const at = model.loggedTime(subject, operation.id) ?? now;
          model.undo({ subject, rules: normalized, requestId: operation.id, at });
          await limiter.undo({ subject, rules, requestId: operation.id, at });
          break;
        }
        case 'ban':
          model.ban(subject, operation.ms, now);
          await limiter.ban(subject, operation.ms, now);
          break;
        case 'unban': {
          const inForce = model.unban(subject, now);
          const reported = await limiter.unban(subject);
          // A store may still hold an ended ban until its cleanup; a ban in force must be reported.
          if (inForce) expect(reported, trace.join('\n')).toBe(true);
          break;
        }
        case 'reset':
          anonymous.delete(subject);
          model.reset(subject);
          await limiter.reset(subject);
          break;
      }
    }
  } finally {
    nextBase = latest + 10_000_000;
  }
}

function expectSameDecision(actual: Decision, expected: Decision, trace: string[]): void {
  const pick = (decision: Decision) => ({
    allowed: decision.allowed,
    code: decision.code,
    rule: decision.rule,
    retryAfterMs: decision.retryAfterMs,
    counts: decision.counts,
    at: decision.at,
  });
  expect(pick(actual), trace.join('\n')).toEqual(pick(expected));
}

async function checkSlidingCounterBound(store: LimiterStore, windowMs: number, limit: number, steps: number[]): Promise<void> {
  const limiter = new Limiter({ store });
  const rules: Rule[] = [{ windowMs, limit, algorithm: 'sliding-counter' }];
  const subject = `prop:${randomUUID()}:counter`;
  const b = Math.ceil(windowMs / 10);
  const admitted: number[] = [];
  let now = nextBase;
  try {
    for (const dt of steps) {
      now += dt;
      const decision = await limiter.check({ subject, rules, now });
      const exact = admitted.filter((time) => time > now - 10 * b && time <= now).length;
      const k = Math.floor(now / b);
      const c = admitted.filter((time) => Math.floor(time / b) === k - 10).length;
      expect(Math.abs(decision.counts[0]! - exact), `t=${now} count=${decision.counts[0]} exact=${exact} c=${c}`).toBeLessThanOrEqual(c);
      if (decision.allowed) admitted.push(now);
    }
  } finally {
    nextBase = now + 10_000_000;
  }
}

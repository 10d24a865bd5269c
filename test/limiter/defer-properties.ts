/**
 * Deferral (src/limiter/types.ts, "Deferral") against a brute-force model, for any store: random
 * sliding-log rules (windows, limits, bans), random send times and a mix of direct checks,
 * deferred checks and the releases of deferred ones (a check with the same request id once its
 * time has come). The model tries every millisecond from the start: a count time u is admitted
 * when no window (v − w, v] with v ∈ [u, u + w) holds `limit` entries. Every decision matches
 * the model; a deferred check is recorded at the model's first admitted moment (or refused when
 * that is past its horizon, with the exact wait), bans nothing, and is released once; and no
 * window of any rule ever holds more than its limit.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Limiter } from '../../src/limiter/limiter.js';
import type { Decision, LimiterStore, Rule } from '../../src/limiter/types.js';

type Step = { kind: 'direct' | 'defer' | 'release'; gap: number; horizon: number; pick: number };

const ruleArbitrary: fc.Arbitrary<Rule> = fc.record({
  windowMs: fc.integer({ min: 1, max: 40 }),
  limit: fc.integer({ min: 1, max: 4 }),
  banMs: fc.constantFrom(0, 0, 15, 60),
});

const stepArbitrary: fc.Arbitrary<Step> = fc.record({
  kind: fc.constantFrom('direct', 'defer', 'defer', 'release'),
  gap: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 12 })),
  horizon: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constant(1000)),
  pick: fc.nat(),
});

interface Entry {
  time: number;
  id: string;
}

/** The brute-force model of one subject. */
class DeferModel {
  readonly entries: Entry[] = [];
  banEnd = 0;
  constructor(readonly rules: readonly Required<Pick<Rule, 'windowMs' | 'limit' | 'banMs'>>[]) {}

  private inWindow(v: number, w: number): number {
    return this.entries.filter((entry) => entry.time > v - w && entry.time <= v).length;
  }

  /** The rules hit by an attempt counted at u: some window containing u already holds `limit`. */
  hitRules(u: number): number[] {
    const hit: number[] = [];
    this.rules.forEach((rule, index) => {
      for (let v = u; v < u + rule.windowMs; v++) {
        if (this.inWindow(v, rule.windowMs) >= rule.limit) {
          hit.push(index);
          return;
        }
      }
    });
    return hit;
  }

  firstAdmitted(start: number): number {
    let u = start;
    while (this.hitRules(u).length > 0) u++;
    return u;
  }

  longest(): number {
    return Math.max(...this.rules.map((rule) => rule.windowMs));
  }

  decide(t: number, id: string, deferUntil: number | undefined): Partial<Decision> {
    // The latest entry of the id: a release whose entry had left the window was recorded again.
    const logged = this.entries.findLast((entry) => entry.id === id);
    if (logged && logged.time > t - this.longest()) return { allowed: true, code: 'OK' };
    const banned = this.banEnd > t;
    const hit = banned ? [] : this.hitRules(t);
    if (!banned && hit.length === 0) {
      this.entries.push({ time: t, id });
      return { allowed: true, code: 'OK' };
    }
    if (deferUntil === undefined) {
      if (banned) return { allowed: false, code: 'BANNED', retryAfterMs: this.banEnd - t };
      const ban = Math.max(...hit.map((index) => this.rules[index]!.banMs));
      if (ban > 0) this.banEnd = t + ban;
      return { allowed: false, code: 'RATE_LIMITED' };
    }
    const u = this.firstAdmitted(Math.max(t, this.banEnd));
    if (u > deferUntil) return { allowed: false, code: banned ? 'BANNED' : 'RATE_LIMITED', retryAfterMs: u - t };
    this.entries.push({ time: u, id });
    return { allowed: true, code: 'OK', deferredTo: u };
  }

  /** The fullest window of each rule over everything recorded. */
  worstWindows(): number[] {
    return this.rules.map((rule) => Math.max(0, ...this.entries.map((entry) => this.inWindow(entry.time, rule.windowMs))));
  }
}

export function defineDeferProperties(name: string, makeStore: () => LimiterStore, options: { numRuns: number }): void {
  describe(name, () => {
    it('defers to the first admitted moment, bans nothing for a wait, releases once, never exceeds a window', async () => {
      const limiter = new Limiter({ store: makeStore() });
      await fc.assert(
        fc.asyncProperty(
          fc.array(ruleArbitrary, { minLength: 1, maxLength: 3 }),
          fc.array(stepArbitrary, { minLength: 1, maxLength: 40 }),
          async (ruleList, steps) => {
            const rules = ruleList.map((rule) => ({ ...rule, algorithm: 'sliding-log' as const }));
            const model = new DeferModel(rules.map((rule) => ({ windowMs: rule.windowMs, limit: rule.limit, banMs: rule.banMs ?? 0 })));
            const subject = `defer:${randomUUID()}`;
            let t = 1_000_000;
            let sequence = 0;
            /** Deferred ids not yet released, with their due times. */
            const waiting = new Map<string, number>();
            for (const step of steps) {
              t += step.gap;
              let id: string;
              let deferUntil: number | undefined;
              if (step.kind === 'release') {
                const due = [...waiting].filter(([, at]) => at <= t);
                if (due.length === 0) continue;
                id = due[step.pick % due.length]![0];
                waiting.delete(id);
                deferUntil = t + step.horizon;
              } else {
                id = `${step.kind}-${sequence++}`;
                if (step.kind === 'defer') deferUntil = t + step.horizon;
              }
              const decision = await limiter.check({ subject, rules, requestId: id, now: t, deferUntil });
              const expected = model.decide(t, id, deferUntil);
              const seen: Partial<Decision> = { allowed: decision.allowed, code: decision.code };
              if (expected.retryAfterMs !== undefined) seen.retryAfterMs = decision.retryAfterMs;
              if (decision.deferredTo !== undefined) seen.deferredTo = decision.deferredTo;
              expect(seen).toEqual(expected);
              if (decision.deferredTo !== undefined) waiting.set(id, decision.deferredTo);
            }
            // The ban is the model's: a deferral never set one (a direct check at the end reads it).
            t += 1;
            const last = await limiter.check({ subject, rules, requestId: `direct-${sequence}`, now: t });
            expect({ allowed: last.allowed, code: last.code }).toEqual(pick(model.decide(t, `direct-${sequence}`, undefined)));
            for (const [index, worst] of model.worstWindows().entries()) expect(worst).toBeLessThanOrEqual(rules[index]!.limit);
          },
        ),
        { numRuns: options.numRuns },
      );
      await limiter.close();
    });
  });
}

function pick(decision: Partial<Decision>): Partial<Decision> {
  return { allowed: decision.allowed, code: decision.code };
}

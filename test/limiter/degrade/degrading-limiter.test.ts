import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/limiter/clock.js';
import {
  type DegradationEvent,
  type DegradedDecision,
  DegradingLimiter,
  type DegradingLimiterOptions,
  type FallbackPolicy,
} from '../../../src/limiter/degrade/index.js';
import { Limiter } from '../../../src/limiter/limiter.js';
import { MemoryStore } from '../../../src/limiter/stores/memory/memory-store.js';
import type { Decision, LimiterStore, Rule, StoreCheck, StorePeek, StoreUndo } from '../../../src/limiter/types.js';

/**
 * A real MemoryStore behind controllable trouble: `delayMs` of simulated latency (the manual clock
 * advances during the call), `failWith` (the call rejects) or `hang` (the call waits until
 * `release()`, so the limiter's real timeout fires first).
 */
class TroubledStore implements LimiterStore {
  delayMs = 0;
  failWith: unknown;
  hang = false;
  calls = 0;
  private held: (() => void)[] = [];
  constructor(
    readonly inner: MemoryStore,
    private readonly clock: ManualClock,
  ) {}

  release(): void {
    for (const resume of this.held.splice(0)) resume();
  }

  private async trouble(): Promise<void> {
    this.calls++;
    this.clock.advance(this.delayMs);
    if (this.hang) await new Promise<void>((resume) => this.held.push(resume));
    if (this.failWith !== undefined) throw this.failWith;
  }

  async check(request: StoreCheck): Promise<Decision> {
    await this.trouble();
    return this.inner.check(request);
  }
  async peek(request: StorePeek): Promise<Decision> {
    return this.inner.peek(request);
  }
  async banIfHit(request: StorePeek): Promise<Decision> {
    await this.trouble();
    return this.inner.banIfHit(request);
  }
  async undo(request: StoreUndo): Promise<void> {
    await this.trouble();
    return this.inner.undo(request);
  }
  reset(subject: string): Promise<void> {
    return this.inner.reset(subject);
  }
  ban(subject: string, ms: number, now: number | undefined): Promise<void> {
    return this.inner.ban(subject, ms, now);
  }
  unban(subject: string): Promise<boolean> {
    return this.inner.unban(subject);
  }
}

/** mulberry32: a small seeded PRNG, so sampling tests are reproducible. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function setup(options: Partial<DegradingLimiterOptions> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const primaryStore = new TroubledStore(new MemoryStore({ clock }), clock);
  const localStore = new MemoryStore({ clock });
  const events: DegradationEvent[] = [];
  const limiter = new DegradingLimiter({
    primary: new Limiter({ store: primaryStore }),
    local: new Limiter({ store: localStore }),
    listener: (event) => events.push(event),
    timeoutMs: 20,
    ...options,
    breaker: { clock, consecutiveErrors: 3, openMs: 2000, probes: 2, ...options.breaker },
  });
  return { clock, primaryStore, localStore, primary: new Limiter({ store: primaryStore }), limiter, events };
}

const RULES: Rule[] = [{ windowMs: 60_000, limit: 2 }];

async function decide(limiter: DegradingLimiter, n: number, subject = 's', policy?: FallbackPolicy): Promise<DegradedDecision[]> {
  const out: DegradedDecision[] = [];
  for (let i = 0; i < n; i++) out.push(await limiter.check({ subject, rules: RULES }, policy));
  return out;
}

describe('DegradingLimiter', () => {
  it('answers from the primary while it is healthy', async () => {
    const { limiter, primaryStore, events } = setup();
    const [a, b, c] = await decide(limiter, 3);
    expect([a?.code, b?.code, c?.code]).toEqual(['OK', 'OK', 'RATE_LIMITED']);
    expect(c?.degraded).toBeUndefined();
    expect(primaryStore.calls).toBe(3);
    expect(events.filter((e) => e.type === 'latency').map((e) => (e.type === 'latency' ? e.store : ''))).toEqual([
      'primary',
      'primary',
      'primary',
    ]);
    expect(limiter.state()).toBe('closed');
  });

  it('opens on errors and then stops calling the primary', async () => {
    const { limiter, primaryStore, events } = setup();
    primaryStore.failWith = new Error('ECONNREFUSED');
    const decisions = await decide(limiter, 5);
    expect(decisions.every((d) => d.degraded === 'local')).toBe(true);
    expect(limiter.state()).toBe('open');
    expect(primaryStore.calls).toBe(3);
    const reasons = events.flatMap((e) => (e.type === 'fallback' ? [e.reason] : []));
    expect(reasons).toEqual(['error', 'error', 'error', 'open', 'open']);
    expect(events).toContainEqual({ type: 'state', from: 'closed', to: 'open' });
  });

  it('opens on sustained slowness but not on one slow call', async () => {
    const { limiter, primaryStore, events } = setup({ breaker: { degradeMs: 50, minSamples: 5 } });
    primaryStore.delayMs = 60;
    await limiter.check({ subject: 'a', rules: RULES });
    primaryStore.delayMs = 1;
    await decide(limiter, 6, 'b');
    expect(limiter.state()).toBe('closed');
    primaryStore.delayMs = 60;
    await decide(limiter, 10, 'c');
    expect(limiter.state()).toBe('open');
    expect(events.filter((e) => e.type === 'alert').length).toBeGreaterThanOrEqual(5);
  });

  it('recovers through half-open probes', async () => {
    const { limiter, primaryStore, clock, events } = setup();
    primaryStore.failWith = new Error('down');
    await decide(limiter, 3, 'x');
    expect(limiter.state()).toBe('open');
    primaryStore.failWith = undefined;
    clock.advance(2000);
    expect(limiter.state()).toBe('half-open');
    const probes = await decide(limiter, 2, 'y');
    expect(probes.map((d) => d.degraded)).toEqual([undefined, undefined]);
    expect(limiter.state()).toBe('closed');
    const states = events.flatMap((e) => (e.type === 'state' ? [`${e.from}->${e.to}`] : []));
    expect(states).toEqual(['closed->open', 'open->half-open', 'half-open->closed']);
  });

  it('times out a hanging primary and answers from the fallback; the late call may still record', async () => {
    const { limiter, primaryStore, primary, events } = setup({ timeoutMs: 20 });
    primaryStore.hang = true;
    const decision = await limiter.check({ subject: 'slow', rules: RULES, requestId: 'r1' });
    expect(decision).toMatchObject({ allowed: true, degraded: 'local' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'fallback', reason: 'timeout', mode: 'local' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'latency', store: 'primary', outcome: 'timeout' }));
    // The documented consequence: the primary finishes later and records the attempt too.
    primaryStore.hang = false;
    primaryStore.release();
    await new Promise((resume) => setTimeout(resume, 5));
    const peek = await primary.peek({ subject: 'slow', rules: RULES });
    expect(peek.counts).toEqual([1]);
  });

  describe('fallback modes', () => {
    async function degraded(policy: FallbackPolicy, n: number, options: Partial<DegradingLimiterOptions> = {}) {
      const ctx = setup({ policy, ...options });
      ctx.primaryStore.failWith = new Error('down');
      return { ...ctx, decisions: await decide(ctx.limiter, n) };
    }

    it('local: the same rules counted in process', async () => {
      const { decisions } = await degraded({ mode: 'local' }, 3);
      expect(decisions.map((d) => [d.code, d.degraded])).toEqual([
        ['OK', 'local'],
        ['OK', 'local'],
        ['RATE_LIMITED', 'local'],
      ]);
      expect(decisions[2]?.rule).toBe(0);
      expect(decisions[2]?.retryAfterMs).toBeGreaterThan(0);
    });

    it('local with divideBy: limits divided and rounded up, at least 1', async () => {
      const rules: Rule[] = [{ windowMs: 60_000, limit: 5 }];
      const ctx = setup({ policy: { mode: 'local', divideBy: 2 } });
      ctx.primaryStore.failWith = new Error('down');
      const allowed: boolean[] = [];
      for (let i = 0; i < 5; i++) allowed.push((await ctx.limiter.check({ subject: 'd', rules })).allowed);
      expect(allowed).toEqual([true, true, true, false, false]); // ceil(5 / 2) = 3
      const one = setup({ policy: { mode: 'local', divideBy: 10 } });
      one.primaryStore.failWith = new Error('down');
      const d = await decide(one.limiter, 2, 'e');
      expect(d.map((x) => x.allowed)).toEqual([true, false]); // ceil(2 / 10) = 1
    });

    it('static: the static rules counted in process', async () => {
      const staticRules: Rule[] = [{ windowMs: 60_000, limit: 4 }];
      const { decisions } = await degraded({ mode: 'static', staticRules }, 5);
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
      expect(decisions.every((d) => d.degraded === 'static')).toBe(true);
    });

    it('allow: everything admitted, nothing counted', async () => {
      const { decisions, localStore } = await degraded({ mode: 'allow' }, 5);
      expect(decisions.every((d) => d.allowed && d.code === 'OK' && d.degraded === 'allow')).toBe(true);
      expect(
        (await localStore.peek({ subject: 's', rules: [{ windowMs: 60_000, limit: 2, banMs: 0, algorithm: 'sliding-log' }] })).counts,
      ).toEqual([0]);
    });

    it('deny: everything rejected RATE_LIMITED with no rule and a retry time', async () => {
      const { decisions } = await degraded({ mode: 'deny' }, 4);
      for (const d of decisions) {
        expect(d).toMatchObject({ allowed: false, code: 'RATE_LIMITED', degraded: 'deny' });
        expect(d.rule).toBeUndefined();
        expect(d.retryAfterMs).toBeGreaterThan(0);
      }
    });

    it('a per-call policy overrides the default', async () => {
      const { limiter, primaryStore } = setup({ policy: { mode: 'local' } });
      primaryStore.failWith = new Error('down');
      expect((await limiter.check({ subject: 'p', rules: RULES }, { mode: 'deny' })).degraded).toBe('deny');
    });
  });

  it('samples: about sampleRate of degraded attempts follow the mode, the rest are allowed', async () => {
    const { limiter, primaryStore } = setup({ policy: { mode: 'deny', sampleRate: 0.25 }, random: seeded(42) });
    primaryStore.failWith = new Error('down');
    let denied = 0;
    const n = 2000;
    for (let i = 0; i < n; i++) {
      const d = await limiter.check({ subject: `u${i}`, rules: RULES });
      if (d.degraded === 'deny') denied++;
      else expect(d).toMatchObject({ allowed: true, degraded: 'allow' });
    }
    expect(denied / n).toBeGreaterThan(0.21);
    expect(denied / n).toBeLessThan(0.29);
  });

  it('never lets a store failure escape, whatever is thrown', async () => {
    const { limiter, primaryStore } = setup({ breaker: { consecutiveErrors: 1000, minSamples: 1000 } });
    const failures: unknown[] = [new Error('x'), new TypeError('bug in a client'), 'a string', null, { weird: true }];
    for (const failure of failures) {
      primaryStore.failWith = failure;
      // `null` as failWith means "no failure" for the double, so use a sentinel object instead.
      if (failure === null) primaryStore.failWith = Object.create(null);
      await expect(limiter.check({ subject: 'f', rules: RULES })).resolves.toMatchObject({ degraded: 'local' });
    }
    const throwing = new DegradingLimiter({
      primary: {
        check: () => {
          throw new Error('synchronous');
        },
        undo: () => Promise.reject(new Error('x')),
      },
      local: new Limiter({ store: new MemoryStore() }),
    });
    await expect(throwing.check({ subject: 'g', rules: RULES })).resolves.toMatchObject({ degraded: 'local' });
    await expect(throwing.undo({ subject: 'g', rules: RULES, requestId: 'q', at: 1 })).resolves.toBe(false);
  });

  it('rejects invalid arguments in every state, without counting them as failures', async () => {
    const { limiter, primaryStore } = setup();
    for (let i = 0; i < 5; i++) {
      await expect(limiter.check({ subject: '', rules: RULES })).rejects.toThrow(TypeError);
      await expect(limiter.check({ subject: 's', rules: [{ windowMs: 0, limit: 1 }] })).rejects.toThrow(RangeError);
    }
    expect(limiter.state()).toBe('closed');
    expect(primaryStore.calls).toBe(0);
    await expect(limiter.check({ subject: 's', rules: RULES }, { mode: 'static' })).rejects.toThrow(/staticRules/);
    primaryStore.failWith = new Error('down');
    await decide(limiter, 3);
    expect(limiter.state()).toBe('open');
    await expect(limiter.check({ subject: 's', rules: RULES, now: -1 })).rejects.toThrow(TypeError);
  });

  it('undoes where the attempt was decided', async () => {
    const { limiter, primaryStore, localStore } = setup();
    const rules = RULES;
    const viaPrimary = await limiter.check({ subject: 'u', rules, requestId: 'a' });
    expect(await limiter.undo({ subject: 'u', rules, requestId: 'a', at: viaPrimary.at })).toBe(true);
    expect(
      (await primaryStore.inner.peek({ subject: 'u', rules: [{ windowMs: 60_000, limit: 2, banMs: 0, algorithm: 'sliding-log' }] })).counts,
    ).toEqual([0]);
    primaryStore.failWith = new Error('down');
    await decide(limiter, 3, 'other');
    const local = await limiter.check({ subject: 'u', rules, requestId: 'b' });
    expect(local.degraded).toBe('local');
    expect(await limiter.undo({ subject: 'u', rules, requestId: 'b', at: local.at, degraded: 'local' })).toBe(true);
    expect(
      (await localStore.peek({ subject: 'u', rules: [{ windowMs: 60_000, limit: 2, banMs: 0, algorithm: 'sliding-log' }] })).counts,
    ).toEqual([0]);
    // A primary-decided attempt cannot be taken back while the breaker is open.
    expect(await limiter.undo({ subject: 'u', rules, requestId: 'a', at: viaPrimary.at })).toBe(false);
    expect(await limiter.undo({ subject: 'u', rules, requestId: 'c', at: 1, degraded: 'allow' })).toBe(true);
  });

  it('keeps deciding when the listener throws', async () => {
    const { limiter, primaryStore } = setup({
      listener: () => {
        throw new Error('listener bug');
      },
    });
    primaryStore.failWith = new Error('down');
    await expect(decide(limiter, 4)).resolves.toHaveLength(4);
  });
});

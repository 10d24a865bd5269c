/**
 * A limiter that asks a primary store (Redis) and falls back to a local policy when the primary is
 * slow, failing or behind an open circuit breaker (DESIGN.md §7, docs/degradation.md).
 *
 * ```ts
 * const limiter = new DegradingLimiter({
 *   primary: new Limiter({ store: new RedisStore({ client }) }),
 *   local: new Limiter({ store: new MemoryStore() }),
 *   policy: { mode: 'local', divideBy: 4 },
 *   listener: (event) => { ... metrics and logs ... },
 * });
 * const d = await limiter.check({ subject, rules });   // d.degraded: set when the fallback decided
 * ```
 *
 * Every primary call is timed and raced against `timeoutMs`. A timed-out call counts as a failure
 * and is answered from the fallback, but it may still complete in Redis afterwards: the attempt is
 * then recorded there too (it counts against the subject's limits once Redis is back) although the
 * caller saw a fallback decision. That errs on the strict side and is never a lost send.
 *
 * Store failures never reject `check`: the fallback answers. Invalid arguments still reject
 * (TypeError/RangeError), in every state.
 */
import type { Limiter } from '../limiter.js';
import { validateCheckRequest } from '../limiter.js';
import type { CheckRequest, Decision, DecisionCode, PeekRequest, Rule, UndoRequest } from '../types.js';
import { type BreakerPermit, type BreakerState, CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';
import { type DegradedDecision, divideRules, type FallbackMode, type FallbackPolicy, validateFallbackPolicy } from './fallback-policy.js';

/** What the wrapped limiters must offer (a {@link Limiter} does); without `banIfHit`, deferred bans are dropped. */
export type DecisionLimiter = Pick<Limiter, 'check' | 'undo'> & Partial<Pick<Limiter, 'banIfHit'>>;

/** Why the fallback answered: breaker open, the primary call failed, or it timed out. */
export type FallbackReason = 'open' | 'error' | 'timeout';

export type DegradationEvent =
  /** One call to a store: which, what, how long, how it ended (`error`/`timeout`: failed). */
  | { type: 'latency'; store: 'primary' | 'local'; op: 'check' | 'undo'; ms: number; outcome: DecisionCode | 'done' | 'error' | 'timeout' }
  /** A primary call slower than `alertMs` (warn; nothing changes). */
  | { type: 'alert'; ms: number }
  /** The breaker changed state. */
  | { type: 'state'; from: BreakerState; to: BreakerState }
  /** A decision made by the fallback: the mode used (`allow` for attempts sampling skipped). */
  | { type: 'fallback'; mode: FallbackMode; reason: FallbackReason; error?: unknown };

export type DegradationListener = (event: DegradationEvent) => void;

export interface DegradingLimiterOptions {
  /** The shared store, e.g. `new Limiter({ store: new RedisStore(...) })`. */
  primary: DecisionLimiter;
  /** The in-process store for `local` and `static` modes, e.g. `new Limiter({ store: new MemoryStore() })`. */
  local: DecisionLimiter;
  /** Default policy of {@link DegradingLimiter.check}; default `{ mode: 'local' }`. */
  policy?: FallbackPolicy;
  /** Breaker thresholds (its listener is this limiter's). */
  breaker?: Omit<CircuitBreakerOptions, 'listener'>;
  /** Timeout of every primary call in ms; default 2 × the breaker's `degradeMs` (100). */
  timeoutMs?: number;
  /** Receives latencies, alerts, state changes and fallback decisions. Must not throw (ignored if it does). */
  listener?: DegradationListener;
  /** Uniform [0, 1) source for sampling; default Math.random. Tests pass a seeded one. */
  random?: () => number;
}

const TIMED_OUT = Symbol('timed out');
/** Most times a primary call's timeout waits again because the process, not the store, was late. */
const MAX_REARMS = 10;

export class DegradingLimiter {
  readonly breaker: CircuitBreaker;
  readonly timeoutMs: number;
  readonly policy: FallbackPolicy;
  private readonly primary: DecisionLimiter;
  private readonly local: DecisionLimiter;
  private readonly listener: DegradationListener | undefined;
  private readonly random: () => number;

  constructor(options: DegradingLimiterOptions) {
    if (!options?.primary || !options.local) throw new TypeError('DegradingLimiter needs a primary and a local limiter');
    this.primary = options.primary;
    this.local = options.local;
    this.listener = options.listener;
    this.random = options.random ?? Math.random;
    this.policy = options.policy ?? { mode: 'local' };
    validateFallbackPolicy(this.policy);
    this.breaker = new CircuitBreaker({ ...options.breaker, listener: (event) => this.emit(event) });
    this.timeoutMs = options.timeoutMs ?? this.breaker.degradeMs * 2;
    if (!(this.timeoutMs > 0 && Number.isFinite(this.timeoutMs))) throw new RangeError('timeoutMs must be a positive number');
  }

  /** The breaker's state: `closed` means decisions come from the primary store (for `/readyz`). */
  state(): BreakerState {
    return this.breaker.state();
  }

  /**
   * Decide one attempt: by the primary store when the breaker lets the call through and it
   * answers in time; otherwise by `policy` (default: the constructor's), marked `degraded`.
   */
  async check(request: CheckRequest, policy: FallbackPolicy = this.policy): Promise<DegradedDecision> {
    validateCheckRequest(request);
    validateFallbackPolicy(policy);
    const permit = this.breaker.acquire();
    if (!permit) return this.fallback(request, policy, 'open', undefined);
    try {
      const decision = await this.withTimeout(this.primary.check(request), permit);
      const ms = this.breaker.record(permit, true);
      this.emit({ type: 'latency', store: 'primary', op: 'check', ms, outcome: decision.code });
      return decision;
    } catch (error) {
      const ms = this.breaker.record(permit, false);
      const reason = error === TIMED_OUT ? 'timeout' : 'error';
      this.emit({ type: 'latency', store: 'primary', op: 'check', ms, outcome: reason });
      return this.fallback(request, policy, reason, reason === 'error' ? error : undefined);
    }
  }

  /**
   * Take back an attempt admitted by {@link check} (pass its decision's `degraded` and the same
   * policy): from the local store for `local`/`static`, nothing for `allow`, from the primary
   * otherwise. Resolves `false` when the primary could not be reached (breaker open, error or
   * timeout): the attempt then stays counted, which errs on the strict side. Never rejects for a
   * store failure.
   */
  async undo(request: UndoRequest & { degraded?: FallbackMode }, policy: FallbackPolicy = this.policy): Promise<boolean> {
    validateFallbackPolicy(policy);
    const { degraded, ...undo } = request;
    if (degraded === 'allow' || degraded === 'deny') return true;
    if (degraded === 'local' || degraded === 'static') {
      const rules = degraded === 'local' ? divideRules(undo.rules, policy.divideBy) : policy.staticRules!;
      const startedAt = this.breaker.clock.now();
      await this.local.undo({ ...undo, rules });
      this.emit({ type: 'latency', store: 'local', op: 'undo', ms: this.breaker.clock.now() - startedAt, outcome: 'done' });
      return true;
    }
    const permit = this.breaker.acquire();
    if (!permit) return false;
    try {
      await this.withTimeout(this.primary.undo(undo), permit);
      const ms = this.breaker.record(permit, true);
      this.emit({ type: 'latency', store: 'primary', op: 'undo', ms, outcome: 'done' });
      return true;
    } catch (error) {
      const ms = this.breaker.record(permit, false);
      this.emit({ type: 'latency', store: 'primary', op: 'undo', ms, outcome: error === TIMED_OUT ? 'timeout' : 'error' });
      return false;
    }
  }

  /**
   * {@link Limiter.banIfHit} where {@link check} decided (pass its decision's `degraded` and the
   * same policy): the local store for `local`/`static` (with the rules that check used), nothing
   * for `allow`/`deny`, the primary otherwise. Resolves `undefined` when nothing was asked or the
   * primary could not be reached (no ban then: the window's limit still holds). Never rejects for
   * a store failure.
   */
  async banIfHit(request: PeekRequest & { degraded?: FallbackMode }, policy: FallbackPolicy = this.policy): Promise<Decision | undefined> {
    validateFallbackPolicy(policy);
    const { degraded, ...look } = request;
    if (degraded === 'allow' || degraded === 'deny') return undefined;
    if (degraded === 'local' || degraded === 'static') {
      const rules = degraded === 'local' ? divideRules(look.rules, policy.divideBy) : policy.staticRules!;
      return this.local.banIfHit?.({ ...look, rules });
    }
    const banIfHit = this.primary.banIfHit;
    const permit = banIfHit && this.breaker.acquire();
    if (!permit) return undefined;
    try {
      const decision = await this.withTimeout(banIfHit.call(this.primary, look), permit);
      this.breaker.record(permit, true);
      return decision;
    } catch {
      this.breaker.record(permit, false);
      return undefined;
    }
  }

  private async fallback(request: CheckRequest, policy: FallbackPolicy, reason: FallbackReason, error: unknown): Promise<DegradedDecision> {
    const sampled = policy.sampleRate === undefined || policy.sampleRate >= 1 || this.random() < policy.sampleRate;
    const mode: FallbackMode = sampled ? policy.mode : 'allow';
    this.emit(error === undefined ? { type: 'fallback', mode, reason } : { type: 'fallback', mode, reason, error });
    const at = request.now ?? Date.now();
    switch (mode) {
      case 'allow':
        return { allowed: true, code: 'OK', retryAfterMs: 0, counts: [], at, degraded: 'allow' };
      case 'deny':
        // No rule was hit: retry when the breaker may probe the primary again.
        return {
          allowed: false,
          code: 'RATE_LIMITED',
          retryAfterMs: Math.ceil(this.breaker.remainingOpenMs()) || Math.ceil(this.breaker.openMs),
          counts: [],
          at,
          degraded: 'deny',
        };
      case 'local':
        return this.checkLocally(request, divideRules(request.rules, policy.divideBy), 'local');
      case 'static':
        return this.checkLocally(request, policy.staticRules!, 'static');
    }
  }

  private async checkLocally(request: CheckRequest, rules: readonly Rule[], mode: 'local' | 'static'): Promise<DegradedDecision> {
    const startedAt = this.breaker.clock.now();
    const decision = await this.local.check({ ...request, rules });
    this.emit({ type: 'latency', store: 'local', op: 'check', ms: this.breaker.clock.now() - startedAt, outcome: decision.code });
    return { ...decision, degraded: mode };
  }

  /**
   * `call`, or TIMED_OUT after `timeoutMs` of the store's time: with the breaker's `loopLag`, a
   * timer that fires while the call's wait was mostly this process's own lag waits again for the
   * rest (up to {@link MAX_REARMS} times), since the reply may be read on the next turn.
   */
  private withTimeout<T>(call: Promise<T>, permit: BreakerPermit): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      let rearms = 0;
      const expire = () => {
        const rest = this.timeoutMs - this.breaker.storeMs(permit, this.breaker.clock.now() - permit.startedAt);
        if (rest > 0 && rearms++ < MAX_REARMS) timer = setTimeout(expire, rest);
        else reject(TIMED_OUT);
      };
      timer = setTimeout(expire, this.timeoutMs);
    });
    // A call that loses the race may still reject later; that must not be an unhandled rejection.
    call.catch(() => {});
    return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
  }

  private emit(event: DegradationEvent): void {
    try {
      this.listener?.(event);
    } catch {
      // A broken listener must not break decisions.
    }
  }
}

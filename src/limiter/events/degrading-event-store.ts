/**
 * Event rules while their primary store (Redis) is down or slow: behind a circuit breaker (pass
 * the limiter's, `DegradingLimiter.breaker`, so one breaker judges Redis), every call has a
 * timeout, and a call the primary does not answer is decided by the fallback mode:
 * `local`/`static` by the in-process store, `allow` as if no event rule fired, `deny` as if every
 * one did. The answer says which (`degraded`).
 */
import type { CircuitBreaker } from '../degrade/circuit-breaker.js';
import type { FallbackMode } from '../degrade/fallback-policy.js';
import type { AppliedEvents, EventApplier } from './risk-engine.js';
import type { EventOp, EventResult, EventStore } from './types.js';

export interface DegradingEventStoreOptions {
  primary: EventStore;
  local: EventStore;
  breaker: CircuitBreaker;
  mode: FallbackMode;
  /** Timeout of a primary call in ms. */
  timeoutMs: number;
}

const TIMED_OUT = Symbol('timed out');

export class DegradingEventStore implements EventApplier {
  /** Offered when both stores offer it: a check's fallback then decides it in one call too. */
  readonly decide: EventApplier['decide'];

  constructor(private readonly options: DegradingEventStoreOptions) {
    const { primary, local } = options;
    const primaryDecide = primary.decide;
    const localDecide = local.decide;
    this.decide =
      primaryDecide && localDecide
        ? (check, now) =>
            this.run(
              () => primaryDecide(check, now),
              () => localDecide(check, now),
              check.ops,
            )
        : undefined;
  }

  apply(ops: readonly EventOp[], now?: number): Promise<AppliedEvents> {
    return this.run(
      () => this.options.primary.apply(ops, now),
      () => this.options.local.apply(ops, now),
      ops,
    );
  }

  private async run(
    primaryCall: () => Promise<EventResult[]>,
    localCall: () => Promise<EventResult[]>,
    ops: readonly EventOp[],
  ): Promise<AppliedEvents> {
    const { breaker } = this.options;
    const permit = breaker.acquire();
    if (permit) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const results = await Promise.race([
          primaryCall(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(TIMED_OUT), this.options.timeoutMs);
          }),
        ]);
        breaker.record(permit, true);
        return { results };
      } catch {
        breaker.record(permit, false);
      } finally {
        clearTimeout(timer);
      }
    }
    const mode = this.options.mode;
    if (mode === 'allow' || mode === 'deny') {
      return { results: ops.map(() => ({ fired: mode === 'deny', count: 0 })), degraded: mode };
    }
    return { results: await localCall(), degraded: mode };
  }
}

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
  /**
   * Offered when the primary offers it. While the primary does not answer it decides nothing
   * (`undefined`): the engine then judges the check apart, its window rules through the
   * limiter's own fallback (`local` divides their limits, `static` replaces them), as without it.
   */
  readonly decide: EventApplier['decide'];

  constructor(private readonly options: DegradingEventStoreOptions) {
    const primaryDecide = options.primary.decide;
    this.decide = primaryDecide
      ? async (check, now) => {
          const results = await this.primary(() => primaryDecide(check, now));
          return results === undefined ? undefined : { results };
        }
      : undefined;
  }

  async apply(ops: readonly EventOp[], now?: number): Promise<AppliedEvents> {
    const results = await this.primary(() => this.options.primary.apply(ops, now));
    if (results !== undefined) return { results };
    const mode = this.options.mode;
    if (mode === 'allow' || mode === 'deny') {
      return { results: ops.map(() => ({ fired: mode === 'deny', count: 0 })), degraded: mode };
    }
    return { results: await this.options.local.apply(ops, now), degraded: mode };
  }

  /** The primary's answer; undefined when the breaker is open or the call failed or timed out. */
  private async primary(call: () => Promise<EventResult[]>): Promise<EventResult[] | undefined> {
    const { breaker } = this.options;
    const permit = breaker.acquire();
    if (permit) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const results = await Promise.race([
          call(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(TIMED_OUT), this.options.timeoutMs);
          }),
        ]);
        breaker.record(permit, true);
        return results;
      } catch {
        breaker.record(permit, false);
      } finally {
        clearTimeout(timer);
      }
    }
    return undefined;
  }
}

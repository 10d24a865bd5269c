/**
 * Turns the events of a {@link DegradingLimiter} into metrics, so the service wires one listener:
 *
 * ```ts
 * const limiter = new DegradingLimiter({ ..., listener: (event) => {
 *   recordDegradationEvent(metrics, event);
 *   if (event.type === 'alert') slowCalls.record(event.ms); // a throttled warning (SlowCallLog)
 * } });
 * ```
 */
import type { DegradationEvent } from '../limiter/degrade/index.js';
import { BREAKER_STATE_VALUE, Metrics } from './metrics.js';

/** `operation` label of limiter calls on `sluice_redis_*`. */
const OPERATION = { check: 'limiter_check', undo: 'limiter_undo' } as const;

export function recordDegradationEvent(metrics: Metrics, event: DegradationEvent): void {
  switch (event.type) {
    case 'latency': {
      if (event.store === 'primary') {
        const operation = OPERATION[event.op];
        Metrics.observeMs(metrics.redisCommandDuration, { operation }, event.ms);
        if (event.outcome === 'error' || event.outcome === 'timeout') metrics.redisErrors.inc({ operation, kind: event.outcome });
      }
      if (event.op === 'check') {
        const store = event.store === 'primary' ? 'redis' : 'memory';
        Metrics.observeMs(metrics.decisionDuration, { store, outcome: event.outcome }, event.ms);
      }
      return;
    }
    case 'alert':
      metrics.redisSlowCalls.inc();
      return;
    case 'state':
      metrics.breakerState.set(BREAKER_STATE_VALUE[event.to]);
      metrics.breakerTransitions.inc({ to: event.to });
      return;
    case 'fallback':
      metrics.degradedDecisions.inc({ mode: event.mode, reason: event.reason });
      return;
  }
}

/** Degradation for the limiter: a circuit breaker on the primary store and the fallback policies. */
export {
  type BreakerEvent,
  type BreakerListener,
  type BreakerPermit,
  type BreakerState,
  CircuitBreaker,
  type CircuitBreakerOptions,
  monotonicClock,
} from './circuit-breaker.js';
export {
  type DecisionLimiter,
  type DegradationEvent,
  type DegradationListener,
  DegradingLimiter,
  type DegradingLimiterOptions,
  type FallbackReason,
} from './degrading-limiter.js';
export {
  type DegradedDecision,
  divideRules,
  FALLBACK_MODES,
  type FallbackMode,
  type FallbackPolicy,
  validateFallbackPolicy,
} from './fallback-policy.js';
export { EventLoopLag, type EventLoopLagOptions, type LoopLagSource } from './loop-lag.js';

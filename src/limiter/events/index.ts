/** Risk rules over events (last-n, distinct, seen) beside the limiter's windows: see ./types.ts and ./kinds/. */

export { STATE_BYTES, seenFilterStateBytes } from './cost.js';
export { DegradingEventStore, type DegradingEventStoreOptions } from './degrading-event-store.js';
export { bloomSize } from './hashing.js';
export { RISK_KINDS } from './kinds/index.js';
export type { RiskKind } from './kinds/kind.js';
export { MemoryEventStore, type MemoryEventStoreOptions } from './memory-event-store.js';
export { RedisEventStore, type RedisEventStoreOptions } from './redis-event-store.js';
export * from './risk-engine.js';
export {
  checkRiskStateBytes,
  normalizeRiskRule,
  normalizeRiskRules,
  RiskRuleError,
  riskRuleStateBytes,
  seenFilterSize,
  validateDimensions,
} from './rules.js';
export * from './types.js';

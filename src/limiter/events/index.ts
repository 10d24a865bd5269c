/** Risk rules over events (last-n, distinct, seen) beside the limiter's windows: see ./types.ts. */

export { checkRiskStateBytes, riskRuleStateBytes, STATE_BYTES, seenFilterStateBytes } from './cost.js';
export { DegradingEventStore, type DegradingEventStoreOptions } from './degrading-event-store.js';
export { bloomSize } from './hashing.js';
export { MemoryEventStore, type MemoryEventStoreOptions } from './memory-event-store.js';
export { RedisEventStore, type RedisEventStoreOptions } from './redis-event-store.js';
export * from './risk-engine.js';
export { normalizeRiskRule, normalizeRiskRules, RiskRuleError, seenFilterSize, validateDimensions } from './rules.js';
export * from './types.js';

/**
 * sluice's frequency limiter, usable on its own: `import { Limiter, MemoryStore, RedisStore } from 'sluice/limiter'`.
 * Nothing here imports from the rest of sluice.
 */
export { Limiter, normalizeRule, type LimiterOptions } from './limiter.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
export * from './types.js';
export { MemoryStore, type MemoryStoreOptions } from './stores/memory/memory-store.js';
export { RedisStore, type RedisStoreOptions } from './stores/redis/redis-store.js';

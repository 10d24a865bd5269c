/**
 * sluice's frequency limiter, usable on its own: `import { Limiter, MemoryStore, RedisStore } from 'sluice/limiter'`.
 * Nothing here imports from the rest of sluice.
 */

export { BanCache, type BanCacheOptions } from './cache/ban-cache.js';
export { type Clock, ManualClock, systemClock } from './clock.js';
export * from './degrade/index.js';
export * from './events/index.js';
export { firstAdmitted } from './first-admitted.js';
export { TokenLeases, type TokenLeasesOptions } from './lease/token-leases.js';
export { Limiter, type LimiterOptions, normalizeRule, normalizeRules, validateCheckRequest } from './limiter.js';
export { MemoryStore, type MemoryStoreOptions, StoreCapacityError } from './stores/memory/memory-store.js';
export type { MemorySnapshot, SnapshotSubject } from './stores/memory/snapshot.js';
export type { SnapshotBounds, SnapshotText } from './stores/memory/snapshot-writer.js';
export { LuaScript, type ScriptClient } from './stores/redis/lua-script.js';
export { type ClusterBatches, RedisStore, type RedisStoreClient, type RedisStoreOptions } from './stores/redis/redis-store.js';
export * from './types.js';

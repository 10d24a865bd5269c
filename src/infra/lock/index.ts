export { createInProcessLockFactory, InProcessLeaseLock, InProcessLockRegistry, processLockRegistry } from './in-process-lease-lock.js';
export type { LeaseLock, LockFactory, LockLossReason } from './lease-lock.js';
export {
  createRedisLockFactory,
  DEFAULT_LEASE_MS,
  type LockClient,
  type LockEvent,
  RedisLeaseLock,
  type RedisLeaseLockOptions,
  type RedisLockFactoryOptions,
} from './redis-lease-lock.js';

export type { DueEntry, DueIndex } from './due-index.js';
export { bucketOf, type DueIndexKeys, dueIndexKeys } from './keys.js';
export { type DueIndexClient, RedisDueIndex, type RedisDueIndexOptions } from './redis-due-index.js';

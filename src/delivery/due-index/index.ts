export type { DueEntry, DueIndex } from './due-index.js';
export { type DueIndexKeys, dueIndexKeys, queueOf } from './keys.js';
export { type DueIndexClient, RedisDueIndex, type RedisDueIndexOptions } from './redis-due-index.js';

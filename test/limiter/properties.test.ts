import { MemoryStore } from '../../src/limiter/stores/memory/memory-store.js';
import { defineModelProperties } from './model-properties.js';

defineModelProperties('MemoryStore against the reference model', () => new MemoryStore(), { numRuns: 300 });

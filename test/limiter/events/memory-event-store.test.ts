import { MemoryEventStore } from '../../../src/limiter/events/memory-event-store.js';
import { defineCheckConformance } from './check-conformance.js';
import { defineEventStoreConformance } from './event-conformance.js';

defineEventStoreConformance('MemoryEventStore conformance', () => new MemoryEventStore({ keySecret: 'test' }));
defineCheckConformance('MemoryEventStore decide conformance', () => new MemoryEventStore({ keySecret: 'test' }));

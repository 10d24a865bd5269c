import { MemoryEventStore } from '../../../src/limiter/events/memory-event-store.js';
import { defineEventStoreConformance } from './event-conformance.js';

defineEventStoreConformance('MemoryEventStore conformance', () => new MemoryEventStore({ keySecret: 'test' }));

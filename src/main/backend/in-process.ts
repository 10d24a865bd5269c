/**
 * What every backend keeps in this process: the memory limiter store (the embedded default's
 * store, Redis's fallback) and the in-process risk event store, with their bounds and metric.
 */
import { isQuotaSubject, subjectTenant } from '../../admission/subjects.js';
import { Limiter, MemoryEventStore, MemoryStore } from '../../limiter/index.js';
import type { BackendContext } from './types.js';

export interface InProcessStores {
  memory: MemoryStore;
  /** A limiter over {@link memory}. */
  local: Limiter;
  localRiskEvents: MemoryEventStore;
}

export function inProcessStores({ settings, clock, metrics, keySecret }: BackendContext): InProcessStores {
  const memory = new MemoryStore({ clock, maxSubjects: settings.limiterMemoryMax, ownerOf: subjectTenant, pinned: isQuotaSubject });
  metrics.setLimiterMemory(() => ({ subjects: memory.size, evictedLive: memory.evictedLive }));
  return {
    memory,
    local: new Limiter({ store: memory }),
    localRiskEvents: new MemoryEventStore({
      clock,
      keySecret,
      maxSubjects: settings.limiterMemoryMax,
      maxBytes: settings.riskMemoryMaxBytes,
    }),
  };
}

/**
 * The embedded default: one process holds every count, ban, lock and wake. Nothing is shared,
 * so nothing degrades; the dispatchers find due messages with SQL queries (no due index).
 */
import { LocalFrequencyGate } from '../../admission/adapters/frequency-gate.js';
import { InProcessChangeBus } from '../../infra/change-bus.js';
import { createInProcessLockFactory } from '../../infra/lock/index.js';
import { directEvents } from '../../limiter/index.js';
import { Metrics } from '../../metrics/index.js';
import { brokerPart } from './broker.js';
import { inProcessStores } from './in-process.js';
import type { BackendContext, EmbeddedBackend } from './types.js';

export function embeddedBackend(context: BackendContext): EmbeddedBackend {
  const { metrics } = context;
  const { memory, local: limiter, localRiskEvents } = inProcessStores(context);
  const broker = brokerPart(context);
  const configBus = new InProcessChangeBus();
  const wakeBus = new InProcessChangeBus();
  return {
    kind: 'embedded',
    limiter,
    memoryStore: memory,
    resilientLimiter: limiter,
    frequency: new LocalFrequencyGate(limiter, (ms, outcome) =>
      Metrics.observeMs(metrics.decisionDuration, { store: 'memory', outcome }, ms),
    ),
    riskEvents: directEvents(localRiskEvents),
    localRiskEvents,
    configBus,
    wakeBus,
    locks: createInProcessLockFactory(),
    broker: broker.axis,
    probes: [{ name: 'limiter', check: async () => ({ ok: true, detail: 'in process (embedded)' }) }, ...broker.probes],
    async startupWarnings(sharedDatabase) {
      // A shared database invites a second instance, and each would count alone: a rule of 3 a
      // minute would let 3 through each instance. Nothing else would tell.
      return sharedDatabase
        ? [
            'no Redis: frequency rules, quotas and provider pacing are counted in this process only; run one instance, or set SLUICE_REDIS_URL so that several share their counts',
          ]
        : [];
    },
    async warmUp() {},
    async close() {
      await broker.close();
      await wakeBus.close();
      await configBus.close();
    },
  };
}

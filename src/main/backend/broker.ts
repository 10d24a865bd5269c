/**
 * The broker hand-off's adapter, chosen with the backend (docs/operations.md, "Brokers"): with
 * SLUICE_BROKER_URL, NATS JetStream (`broker/jetstream.ts`); without it, none, and nothing of
 * the hand-off runs. This and `brokerConfigured` are the only places that read the setting; the
 * roles receive the port (`Backend.broker`, the broker axis). Its observer feeds the metrics and the log (each
 * kind of trouble one line per 10 s), never a credential.
 */
import { hostname } from 'node:os';
import { createJetStreamBroker, jetStreamOptionsOf } from '../../broker/jetstream.js';
import type { BrokerObserver, MessageBroker } from '../../broker/port.js';
import { withDeadline } from '../../core/deadline.js';
import { ThrottledLog } from '../../infra/throttled-log.js';
import type { ReadinessProbe } from '../../services/health-service.js';
import type { Settings } from '../../settings/settings.js';
import type { BackendContext, BrokerAxis } from './types.js';

/** Whether a broker is configured: status changes then also write their bus events (the storage wing asks). */
export const brokerConfigured = (settings: Pick<Settings, 'brokerUrl'>): boolean => settings.brokerUrl.length > 0;

/** The broker of `settings` (SLUICE_BROKER_URL is set), connecting in the background. */
export function createBroker({ settings, clock, logger, metrics }: BackendContext): MessageBroker {
  const throttled = (message: string, level: 'warn' | 'error' = 'warn') =>
    new ThrottledLog<Record<string, unknown>>((fields) => logger[level](fields, message), clock);
  const publishFailed = throttled('publishing to the broker failed: due messages wait and are published when it answers');
  const consumeFailed = throttled('pulling from the broker failed; retrying');
  const handlerFailed = throttled('a broker delivery was not handled; the broker redelivers it', 'error');
  const connectFailed = throttled('cannot connect to the broker yet; retrying');
  const ensureFailed = throttled('a broker stream could not be checked or created; retried when used');
  const observer: BrokerObserver = {
    publishFailed: (what, error) => {
      metrics.brokerPublishFailures.inc({ what });
      publishFailed.record({ what, err: error });
    },
    redelivered: (channel) => metrics.brokerRedeliveries.inc({ channel }),
    handlerFailed: (channel, job, error) => handlerFailed.record({ channel, message: job.messageId, err: error }),
    exhausted: (channel, job) => {
      metrics.brokerExhausted.inc({ channel });
      logger.warn(
        { channel, message: job.messageId },
        'a broker job reached its delivery limit unhandled; the sweep publishes its message again',
      );
    },
    discarded: (channel, reason) => logger.warn({ channel, reason }, 'a broker delivery that is no job was terminated'),
    consumeFailed: (channel, error, retryInMs) => consumeFailed.record({ channel, retryInMs, err: error }),
    created: (resource, name, recreated) =>
      (recreated ? logger.warn.bind(logger) : logger.info.bind(logger))(
        { resource, name },
        recreated ? 'a broker resource was missing and is created again' : 'broker resource created',
      ),
    ensureFailed: (resource, name, error) => ensureFailed.record({ resource, name, err: error }),
    connection: (state, servers, error) => {
      metrics.brokerConnected.set(state === 'connected' || state === 'reconnected' ? 1 : 0);
      if (state === 'failed') connectFailed.record({ servers, err: error });
      else if (state === 'disconnected') logger.warn({ servers }, 'disconnected from the broker; reconnecting');
      else logger.info({ servers }, state === 'connected' ? 'connected to the broker' : 'reconnected to the broker');
    },
  };
  metrics.brokerConnected.set(0);
  return createJetStreamBroker(jetStreamOptionsOf(settings, `sluice ${hostname()} ${process.pid}`, observer));
}

/** How long `/readyz` waits for the broker's answer. */
const READY_BROKER_MS = 500;

/**
 * `/readyz`'s broker check: shown, not judged. While the broker is away accepts go on and due
 * messages wait in SQL (published when it is back), so taking every instance out of the load
 * balancer would turn a delay into an outage.
 */
function brokerProbe(broker: () => MessageBroker): ReadinessProbe {
  return {
    name: 'broker',
    check: async () => {
      const health = await withDeadline(broker().health(), READY_BROKER_MS, 'no answer').catch((error: unknown) => ({
        ok: false,
        detail: `no answer within ${READY_BROKER_MS} ms (${(error as Error).message})`,
      }));
      return health.ok
        ? { ok: true, detail: health.detail }
        : { ok: true, detail: `${health.detail}; due messages wait in SQL`, warning: 'the broker is not available' };
    },
  };
}

/** What a backend adds for the broker: its axis (the adapter made at first use: a CLI command never connects), its probe, its close. */
export interface BrokerPart {
  readonly axis: BrokerAxis;
  readonly probes: readonly ReadinessProbe[];
  close(): Promise<void>;
}

export function brokerPart(context: BackendContext): BrokerPart {
  let broker: MessageBroker | undefined;
  const get = (): MessageBroker => {
    broker ??= createBroker(context);
    return broker;
  };
  if (!brokerConfigured(context.settings)) return { axis: { kind: 'none' }, probes: [], close: async () => {} };
  return {
    axis: {
      kind: 'jetstream',
      get port() {
        return get();
      },
    },
    probes: [brokerProbe(get)],
    close: async () => {
      await broker?.close();
    },
  };
}

/**
 * What delivery needs from the rest of sluice, described by the shape it uses (the worker role
 * builds these from the runtime: `main/worker.ts`). Delivery never sees the runtime itself, so it
 * is tested with real stores and wired to whatever backs them.
 */
import type { Logger } from 'pino';
import type { MessageBroker } from '../broker/port.js';
import type { HostResolver } from '../infra/host-resolver.js';
import type { LockFactory } from '../infra/lock/index.js';
import type { Clock, Limiter } from '../limiter/index.js';
import type { Metrics } from '../metrics/index.js';
import type { Provider } from '../providers/provider.js';
import type { Settings } from '../settings/settings.js';
import type { BusEventsRepository } from '../storage/repositories/bus-events.js';
import type { MessagesRepository } from '../storage/repositories/messages.js';
import type { ProvidersRepository } from '../storage/repositories/providers.js';
import type { ReceiptsRepository } from '../storage/repositories/receipts.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { WebhookEventsRepository } from '../storage/repositories/webhook-events.js';
import type { WebhooksRepository } from '../storage/repositories/webhooks.js';
import type { DueIndex } from './due-index/index.js';
import type { PartitionShare } from './roster.js';

/** The settings delivery reads (each described in `settings/settings.ts`). */
export type DeliverySettings = Pick<
  Settings,
  | 'partitions'
  | 'pollMs'
  | 'leaseMs'
  | 'sendConcurrency'
  | 'retryBaseMs'
  | 'retryMaxMs'
  | 'retentionDays'
  | 'webhookAllowPrivate'
  | 'webhookAllowedHosts'
  | 'webhookPollMs'
  | 'webhookConcurrency'
  | 'webhookTimeoutMs'
  | 'webhookRetryBaseMs'
  | 'webhookRetryMaxMs'
  | 'brokerRepublishAfterMs'
  | 'brokerHandOffWindow'
  | 'brokerEvents'
>;

/** The messages table as the dispatchers, the broker consumers and the purger use it: claims, hand-offs, lease renewal, outcomes. */
export type DeliveryMessages = Pick<
  MessagesRepository,
  | 'get'
  | 'handOff'
  | 'handOffDue'
  | 'returnHandOffs'
  | 'handBack'
  | 'nextHandOffAt'
  | 'listHandOffIds'
  | 'outstandingHandOffs'
  | 'claimDue'
  | 'claimMany'
  | 'nextDueAt'
  | 'listDueIds'
  | 'extendLeases'
  | 'markSent'
  | 'markRetry'
  | 'markFailed'
  | 'release'
  | 'purgeFinished'
>;

/** The stored providers, read to build each tenant channel's clients. */
export type ProviderRecords = Pick<ProvidersRepository, 'listEnabledFor' | 'anyStored' | 'revealSecret'>;

/** Which tenants are suspended (their messages wait, and are due again on resume), and their send weights. */
export type TenantStatuses = Pick<TenantsRepository, 'suspendedIds' | 'sendWeights'>;

/** The shared limiter, used for provider pacing only (`pace:<provider id>` subjects). */
export type PaceLimiter = Pick<Limiter, 'check'>;

/** The metrics delivery reports (docs/metrics.md). */
export type DeliveryMetrics = Pick<
  Metrics,
  | 'lockHeld'
  | 'dueIndexBacklog'
  | 'redisErrors'
  | 'redisCommandDuration'
  | 'providerDuration'
  | 'queueWait'
  | 'sends'
  | 'retries'
  | 'messagesPurged'
  | 'webhookEvents'
  | 'webhookEventLatency'
  | 'webhookEventsPending'
  | 'brokerHandoffs'
  | 'brokerExhausted'
  | 'busEventsPublished'
>;

/** Tenants' webhook endpoints, as the event dispatchers read them. */
export type WebhookRecords = Pick<WebhooksRepository, 'listForPartition' | 'signingSecrets'>;

/** The outbox, as the event dispatchers and the purger use it. */
export type WebhookEventRecords = Pick<
  WebhookEventsRepository,
  'due' | 'markDeliveredMany' | 'markFailedAttempt' | 'countPending' | 'purgeFinished'
>;

/** The status events bus's outbox, as its publishers read and clear it. */
export type BusEventRecords = Pick<BusEventsRepository, 'pending' | 'remove'>;

/** Told that `partition` has a message due by `dueAt` (epoch ms); `partition` undefined: look at every partition now. */
export type WakeListener = (partition: string | undefined, dueAt: number) => void;

/** Wakes for newly accepted messages, from every instance (the API role's due feed). */
export interface WakeSource {
  /** Listens for wakes; returns the unsubscribe. */
  onWake(listener: WakeListener): () => void;
}

/** The workers sharing the partitions (`roster.ts`, Redis mode): this worker's share, kept by beats. */
export interface PartitionRoster extends PartitionShare {
  /** The first beat, so the share is known before any lock is taken; then beats until {@link stop}. */
  start(): Promise<void>;
  /** Stops beating and leaves the roster. */
  stop(): Promise<void>;
  /** This worker's share of another set of partitions (the webhook event dispatchers'), counted apart. */
  shareOf(partitions: number): PartitionShare;
}

/** Everything `startDelivery` needs. */
export interface DeliveryDeps {
  settings: DeliverySettings;
  clock: Clock;
  logger: Logger;
  metrics: DeliveryMetrics;
  messages: DeliveryMessages;
  providers: ProviderRecords;
  tenants: TenantStatuses;
  limiter: PaceLimiter;
  /** One lock per partition, `dispatch:<channel>:<partition>`: Redis lease locks, or in process. */
  locks: LockFactory;
  /** The process's due index (Redis mode); absent: the dispatchers claim with a SQL query. */
  dueIndex?: DueIndex;
  /** Absent: one worker, which takes every free lock (the embedded default). */
  roster?: PartitionRoster;
  wakes: WakeSource;
  /**
   * Called for every config change announced by any instance (`tenant:<id>`, ...; `'*'` when
   * announcements may have been missed). Returns the unsubscribe.
   */
  onConfigChange(listener: (key: string) => void): () => void;
  /** Resolves webhook endpoints' and providers' hosts: bounded per tenant, off libuv's thread pool. */
  resolver: Pick<HostResolver, 'resolve' | 'lookupFor'>;
  /** The webhook endpoints and their events: an event dispatcher per partition posts them. */
  webhooks: WebhookRecords;
  webhookEvents: WebhookEventRecords;
  /** Receipts waiting for their send's settle: the purger deletes those past the retention. */
  pendingReceipts: Pick<ReceiptsRepository, 'purgeFinished'>;
  /** Serves a tenant channel without providers while none at all is stored (the embedded default's console). */
  fallbackProvider: Provider;
  /**
   * Broker mode (SLUICE_BROKER_URL): the dispatchers hand due messages to it instead of sending,
   * every worker's consumers send, and the status events go on its bus. Absent: no broker.
   */
  broker?: MessageBroker;
  /** The bus's outbox (broker mode). */
  busEvents: BusEventRecords;
}

/**
 * One partition of the outbox's event dispatch: the webhooks whose `shard % partitions ==
 * partition`, worked by the holder of the partition's lease lock (`webhooks:<n>`), like the
 * message dispatchers. Per endpoint, a pass reads up to 4 × `concurrency` due events into a local
 * queue, and the endpoint's free slots (`concurrency`: its pace) post from it, signed; a finished
 * post starts the next queued one without a query, and only an empty queue asks for a pass (one
 * query per completion was most of what posting cost). Each post is settled: `delivered` on a 2xx
 * within the timeout, else retried with full-jitter exponential backoff until its give-up time
 * (24 h after it was written or replayed), then `failed`. An endpoint that is slow or down fills
 * only its own slots: the others keep going.
 *
 * At least once: a holder that dies between the post and its settle, or loses its lock while a
 * post is in flight, leaves the event pending, and the next holder posts it again. Receivers
 * dedupe by the event id, which both signatures cover (`signature.ts`).
 *
 * Order per message: `WebhookEventsRepository.due` returns an event only when no earlier step of
 * its message is pending for the endpoint, and the posts in flight are still pending, so a
 * message's `sent` is not posted before its `accepted` has been answered 2xx or given up. A
 * queued event was due with no earlier step pending when read, which stays true (steps are
 * written in order, and only the holder settles them); the queues are dropped with the lock.
 */

import type { LookupFunction } from 'node:net';
import type { Logger } from 'pino';
import { signatureHeader, standardWebhookHeaders } from '../../core/webhook-signature.js';
import { fixedLookup, resolveWebhookTarget, type WebhookUrlPolicy } from '../../core/webhook-urls.js';
import type { HostResolver } from '../../infra/host-resolver.js';
import type { LeaseLock } from '../../infra/lock/index.js';
import { ThrottledLog } from '../../infra/throttled-log.js';
import type { Clock } from '../../limiter/index.js';
import { type HttpAnswer, postOnce } from '../../providers/http-request.js';
import type { WebhookEvent, WebhookEventsRepository } from '../../storage/repositories/webhook-events.js';
import type { Webhook, WebhooksRepository } from '../../storage/repositories/webhooks.js';
import { retryDelayMs } from '../attempt.js';
import { PartitionLock } from '../partition-lock.js';
import type { DeliveryMetrics } from '../ports.js';
import type { PartitionShare } from '../roster.js';

/** Posts one event; the default is one bounded HTTP POST. */
export type EventPoster = (request: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** The connection's resolution: the addresses checked (absent when the URL's host is an IP literal). */
  lookup?: LookupFunction | undefined;
}) => Promise<HttpAnswer>;

export interface EventDispatcherOptions {
  partition: number;
  partitions: number;
  lock: LeaseLock;
  webhooks: Pick<WebhooksRepository, 'listForPartition' | 'signingSecrets'>;
  events: Pick<WebhookEventsRepository, 'due' | 'markDeliveredMany' | 'markFailedAttempt' | 'countPending'>;
  clock: Clock;
  logger: Logger;
  metrics?: Pick<DeliveryMetrics, 'webhookEvents' | 'webhookEventLatency' | 'webhookEventsPending' | 'lockHeld'>;
  pollMs: number;
  leaseMs: number;
  /** Posts in flight per endpoint. */
  concurrency: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  urlPolicy: WebhookUrlPolicy;
  /** Resolves endpoints' hosts, bounded per tenant, off the thread pool. */
  resolver: Pick<HostResolver, 'resolve'>;
  random?: () => number;
  post?: EventPoster;
  /** This worker's share of the event partitions (`roster.ts`, Redis mode); absent: take any free lock. */
  share?: PartitionShare;
}

/**
 * How long a webhook's signing secrets are reused. A rotation or removal is announced and drops
 * them at once ({@link EventDispatcher.forgetSecrets}); this bounds an unannounced one, and the
 * end of a rotation's grace period.
 */
const CACHE_MS = 5000;
/** Events read ahead per endpoint: this many times its concurrency. */
const READ_AHEAD = 4;

const defaultPost: EventPoster = (request) => postOnce({ providerId: 'webhook', pool: 'webhook', ...request });

export class EventDispatcher {
  readonly name: string;
  private readonly lock: PartitionLock;
  /** Event ids being posted, per webhook id. */
  private readonly inFlight = new Map<string, Set<string>>();
  /** Due events read and not yet posted, per webhook id, in the order `due` gave them. */
  private readonly queued = new Map<string, WebhookEvent[]>();
  private readonly posts = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  /** The partition's webhooks, re-read on timer passes (a pass woken by a finished post reuses them). */
  private webhooks: Webhook[] | undefined;
  private readonly secrets = new Map<string, { at: number; secrets: string[] | undefined }>();
  /** Bumped by every {@link forgetSecrets}: a read of secrets that started before it is not kept. */
  private secretsGeneration = 0;
  /** 2xx answers waiting for the one transaction that marks them (this event-loop turn's). */
  private marks: { webhookId: string; eventId: string }[] = [];
  private marking: Promise<void> | undefined;
  private nextPassFull = true;
  /** A pass fails on every retry while a dependency is down: one line per 10 s, with a count. */
  private readonly passFailures: ThrottledLog<{ err: unknown; partition: string }>;

  constructor(private readonly options: EventDispatcherOptions) {
    this.name = `webhooks:${options.partition}`;
    this.passFailures = new ThrottledLog((fields) => options.logger.warn(fields, 'webhook event pass failed; tried again'), options.clock);
    this.lock = new PartitionLock({
      partition: this.name,
      lock: options.lock,
      clock: options.clock,
      logger: options.logger,
      leaseMs: options.leaseMs,
      ...(options.share ? { share: options.share } : {}),
      onNotHolding: () => {
        this.queued.clear();
        options.metrics?.lockHeld.set({ partition: this.name }, 0);
        options.metrics?.webhookEventsPending.remove({ partition: this.name });
      },
    });
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Stops passing, waits for the posts in flight to settle, gives the lock back. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await Promise.allSettled([...this.posts]);
    await this.lock.release();
  }

  /** Runs a pass as soon as the current one ends. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass()
      .catch((error: unknown) => this.passFailures.record({ err: error, partition: this.name }))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          setImmediate(() => this.wake());
        } else {
          this.timer = setTimeout(() => {
            this.nextPassFull = true;
            this.wake();
          }, this.options.pollMs);
          this.timer.unref();
        }
      });
  }

  /** Drops the signing secrets held for `webhookId` (all, without one): they changed in SQL. */
  forgetSecrets(webhookId?: string): void {
    this.secretsGeneration++;
    if (webhookId === undefined) this.secrets.clear();
    else this.secrets.delete(webhookId);
  }

  /** Whether this instance holds the partition now. */
  holdsLock(): boolean {
    return this.lock.isHeld();
  }

  /** One pass: every endpoint of the partition gets its free slots filled with its due events. */
  async pass(): Promise<void> {
    const held = await this.lock.hold();
    if (held === 'none') {
      this.queued.clear();
      return;
    }
    if (held === 'taken') this.options.metrics?.lockHeld.set({ partition: this.name }, 1);
    const { events, clock } = this.options;
    const full = this.nextPassFull || this.webhooks === undefined || held === 'taken';
    this.nextPassFull = false;
    if (full) this.webhooks = await this.options.webhooks.listForPartition(this.options.partition, this.options.partitions);
    const webhooks = this.webhooks ?? [];
    const { concurrency } = this.options;
    for (const webhook of webhooks) {
      const flying = this.inFlight.get(webhook.id) ?? new Set<string>();
      if (flying.size >= concurrency) continue;
      const queue = this.queued.get(webhook.id) ?? [];
      if (queue.length < concurrency - flying.size) {
        const exclude = [...flying, ...queue.map((event) => event.eventId)];
        queue.push(...(await events.due(webhook.id, { now: clock.now(), limit: READ_AHEAD * concurrency - queue.length, exclude })));
      }
      this.queued.set(webhook.id, queue);
      while (flying.size < concurrency && queue.length > 0) this.launch(webhook, queue.shift()!, flying);
    }
    if (full && this.options.metrics)
      this.options.metrics.webhookEventsPending.set(
        { partition: this.name },
        await events.countPending(webhooks.map((webhook) => webhook.id)),
      );
  }

  private launch(webhook: Webhook, event: WebhookEvent, flying: Set<string>): void {
    flying.add(event.eventId);
    this.inFlight.set(webhook.id, flying);
    const post = this.deliver(webhook, event)
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error, webhook: webhook.id, event: event.eventId },
          'webhook event settle failed; posted again later',
        ),
      )
      .finally(() => {
        flying.delete(event.eventId);
        this.posts.delete(post);
        const next = this.lock.isHeld() && !this.stopped ? this.queued.get(webhook.id)?.shift() : undefined;
        if (next) this.launch(webhook, next, flying);
        // An empty queue: the next event of this message (or of the endpoint) may be due now.
        else this.wake();
      });
    this.posts.add(post);
  }

  /** Posts one event and settles it. */
  private async deliver(webhook: Webhook, event: WebhookEvent): Promise<void> {
    const { clock, metrics } = this.options;
    const problem = await this.postProblem(webhook, event);
    const now = clock.now();
    if (problem === undefined) {
      await this.markDelivered(webhook.id, event.eventId);
      metrics?.webhookEvents.inc({ type: event.type, outcome: 'delivered' });
      metrics?.webhookEventLatency.observe({ type: event.type }, Math.max(0, now - event.createdAt) / 1000);
      return;
    }
    const delay = retryDelayMs(event.attempts + 1, this.options.retryBaseMs, this.options.retryMaxMs, this.options.random ?? Math.random);
    const status = await this.options.events.markFailedAttempt(webhook.id, event.eventId, { now, nextAt: now + delay, error: problem });
    metrics?.webhookEvents.inc({ type: event.type, outcome: status === 'failed' ? 'failed' : 'retried' });
    if (status === 'failed')
      this.options.logger.warn({ webhook: webhook.id, event: event.eventId, error: problem }, 'webhook event given up after its retries');
  }

  /** Joins this turn's batch of 2xx marks; resolves once its transaction committed. */
  private markDelivered(webhookId: string, eventId: string): Promise<void> {
    this.marks.push({ webhookId, eventId });
    this.marking ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const marks = this.marks;
      this.marks = [];
      this.marking = undefined;
      return this.options.events.markDeliveredMany(marks, this.options.clock.now());
    });
    return this.marking;
  }

  /** The secrets to sign with, read at most every {@link CACHE_MS}; undefined: the webhook is gone. */
  private async signing(webhookId: string): Promise<string[] | undefined> {
    const now = this.options.clock.now();
    const cached = this.secrets.get(webhookId);
    if (cached && now - cached.at < CACHE_MS) return cached.secrets;
    const generation = this.secretsGeneration;
    const found = await this.options.webhooks.signingSecrets(webhookId, now);
    const secrets = found && (found.previous === undefined ? [found.current] : [found.current, found.previous]);
    if (generation === this.secretsGeneration) this.secrets.set(webhookId, { at: now, secrets });
    return secrets;
  }

  /** Why the post did not succeed, or undefined on a 2xx. */
  private async postProblem(webhook: Webhook, event: WebhookEvent): Promise<string | undefined> {
    // Resolved once: the post connects to the addresses checked here, and asks nothing else.
    const target = await resolveWebhookTarget(webhook.url, this.options.urlPolicy, (host) =>
      this.options.resolver.resolve(host, webhook.tenantId),
    );
    if (target.problem !== undefined) return target.problem;
    const signing = await this.signing(webhook.id);
    if (signing === undefined) return 'webhook removed';
    const signedAt = Math.floor(this.options.clock.now() / 1000);
    try {
      const answer = await (this.options.post ?? defaultPost)({
        url: webhook.url,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'sluice-webhooks/1',
          ...standardWebhookHeaders(event.eventId, signedAt, event.body, signing),
          'Sluice-Event-Id': event.eventId,
          'Sluice-Signature': signatureHeader(event.body, signing, signedAt),
        },
        body: event.body,
        timeoutMs: this.options.timeoutMs,
        lookup: target.addresses && fixedLookup(target.addresses),
      });
      if (answer.status >= 200 && answer.status < 300) return undefined;
      return `HTTP ${answer.status}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }
}

/** Tenants' webhook endpoints and their events, for the admin API and the CLI (contract: `WebhookAdminService`). */
import { SluiceError } from '../core/errors.js';
import { EVENT_TYPES, type EventStatus, type EventType } from '../core/lifecycle.js';
import { maskUrl } from '../core/urls.js';
import { resolvedWebhookUrlProblem, type WebhookUrlPolicy } from '../core/webhook-urls.js';
import type { Clock } from '../limiter/index.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { WebhookEvent, WebhookEventsRepository } from '../storage/repositories/webhook-events.js';
import type { Webhook, WebhooksRepository } from '../storage/repositories/webhooks.js';
import type { NewWebhookInput, WebhookAdminService, WebhookEventView, WebhookPatch, WebhookView, WebhookWithSecret } from './contracts.js';

/** Subscribed when a webhook names no events: every status change but the acceptance. */
export const DEFAULT_EVENTS: readonly EventType[] = EVENT_TYPES.filter((type) => type !== 'message.accepted');

/** How long a replayed event is retried, as a new one is. */
const RETRY_MS = 24 * 3_600_000;

export interface WebhookAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  webhooks: Pick<WebhooksRepository, 'create' | 'get' | 'list' | 'update' | 'delete' | 'rotateSecret'>;
  events: Pick<WebhookEventsRepository, 'list' | 'replay'>;
  urlPolicy: WebhookUrlPolicy;
  /** Resolves a tenant's endpoint host (`infra/host-resolver.ts`: bounded per tenant, off the thread pool). */
  resolveHost: (host: string, tenantId: string) => Promise<readonly string[]>;
  clock: Clock;
  /** How long a rotated-out secret still signs. */
  rotateGraceMs: number;
  /**
   * Told after a webhook's secrets changed (rotated, or removed with it), once SQL has the change:
   * announces it so every instance's event dispatchers drop the secrets they hold. Resolves
   * whether or not the announcement got through (it reports its own failure).
   */
  secretsChanged?: (webhookId: string) => Promise<void>;
}

function webhookView(webhook: Webhook): WebhookView {
  return {
    id: webhook.id,
    tenantId: webhook.tenantId,
    url: maskUrl(webhook.url),
    events: webhook.events,
    description: webhook.description,
    enabled: webhook.enabled,
    previousSecretUntil: webhook.previousSecretUntil === null ? null : new Date(webhook.previousSecretUntil).toISOString(),
    createdAt: new Date(webhook.createdAt).toISOString(),
    updatedAt: new Date(webhook.updatedAt).toISOString(),
  };
}

export function eventView(event: WebhookEvent): WebhookEventView {
  return {
    id: event.eventId,
    webhookId: event.webhookId,
    messageId: event.messageId,
    type: event.type,
    status: event.status,
    attempts: event.attempts,
    nextAt: new Date(event.nextAt).toISOString(),
    lastError: event.lastError,
    createdAt: new Date(event.createdAt).toISOString(),
    body: event.body,
  };
}

export class WebhookAdministration implements WebhookAdminService {
  constructor(private readonly deps: WebhookAdministrationDeps) {}

  private async checkUrl(tenantId: string, url: string): Promise<void> {
    const problem = await resolvedWebhookUrlProblem(url, this.deps.urlPolicy, (host) => this.deps.resolveHost(host, tenantId));
    if (problem !== undefined) throw new SluiceError('INVALID_REQUEST', problem, { details: { field: 'url' } });
  }

  async create(tenantId: string, input: NewWebhookInput): Promise<WebhookWithSecret | undefined> {
    if (!(await this.deps.tenants.get(tenantId))) return undefined;
    await this.checkUrl(tenantId, input.url);
    const { webhook, secret } = await this.deps.webhooks.create({
      tenantId,
      url: input.url,
      events: input.events && input.events.length > 0 ? input.events : DEFAULT_EVENTS,
      description: input.description ?? null,
    });
    return { ...webhookView(webhook), secret };
  }

  async list(tenantId: string): Promise<WebhookView[] | undefined> {
    if (!(await this.deps.tenants.get(tenantId))) return undefined;
    return (await this.deps.webhooks.list(tenantId)).map(webhookView);
  }

  async get(tenantId: string, webhookId: string): Promise<WebhookView | undefined> {
    const webhook = await this.deps.webhooks.get(tenantId, webhookId);
    return webhook && webhookView(webhook);
  }

  async update(tenantId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookView | undefined> {
    if (patch.url !== undefined) await this.checkUrl(tenantId, patch.url);
    if (patch.events !== undefined && patch.events.length === 0)
      throw new SluiceError('INVALID_REQUEST', 'events must name at least one event type', { details: { field: 'events' } });
    const webhook = await this.deps.webhooks.update(tenantId, webhookId, {
      ...(patch.url === undefined ? {} : { url: patch.url }),
      ...(patch.events === undefined ? {} : { events: patch.events }),
      ...(patch.description === undefined ? {} : { description: patch.description }),
      ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
    });
    return webhook && webhookView(webhook);
  }

  async remove(tenantId: string, webhookId: string): Promise<boolean> {
    const removed = await this.deps.webhooks.delete(tenantId, webhookId);
    if (removed) await this.deps.secretsChanged?.(webhookId);
    return removed;
  }

  async rotateSecret(tenantId: string, webhookId: string): Promise<WebhookWithSecret | undefined> {
    const rotated = await this.deps.webhooks.rotateSecret(tenantId, webhookId, this.deps.rotateGraceMs);
    if (!rotated) return undefined;
    // Before answering: once the new secret is shown, no instance signs with the old one alone.
    await this.deps.secretsChanged?.(webhookId);
    return { ...webhookView(rotated.webhook), secret: rotated.secret };
  }

  async listEvents(
    tenantId: string,
    webhookId: string,
    options: { status?: EventStatus; limit?: number } = {},
  ): Promise<WebhookEventView[] | undefined> {
    if (!(await this.deps.webhooks.get(tenantId, webhookId))) return undefined;
    const events = await this.deps.events.list(tenantId, webhookId, {
      limit: options.limit ?? 100,
      ...(options.status ? { status: options.status } : {}),
    });
    return events.map(eventView);
  }

  async replay(tenantId: string, webhookId: string, eventId: string): Promise<WebhookEventView | undefined> {
    const event = await this.deps.events.replay(tenantId, webhookId, eventId, { now: this.deps.clock.now(), retryMs: RETRY_MS });
    return event && eventView(event);
  }
}

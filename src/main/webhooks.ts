/**
 * Wires tenants' webhooks: the resolver of the hosts tenants control (webhook endpoints, and the
 * providers' hosts the worker connects to), and the webhook service of the admin API and the CLI,
 * whose secret changes are announced on the change bus (`webhook:<id>`) so that every instance's
 * event dispatchers drop the secrets they hold at once.
 */
import type { Logger } from 'pino';
import type { ChangeBus } from '../infra/change-bus.js';
import { HostResolver } from '../infra/host-resolver.js';
import type { Clock } from '../limiter/index.js';
import { WebhookAdministration } from '../services/webhook-administration.js';
import type { Settings } from '../settings/settings.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { WebhookEventsRepository } from '../storage/repositories/webhook-events.js';
import type { WebhooksRepository } from '../storage/repositories/webhooks.js';

export interface WebhookWiring {
  resolver: HostResolver;
  service: WebhookAdministration;
}

export function createWebhooks(
  settings: Settings,
  deps: {
    repositories: { tenants: TenantsRepository; webhooks: WebhooksRepository; webhookEvents: WebhookEventsRepository };
    clock: Clock;
    bus: ChangeBus;
    logger: Logger;
  },
): WebhookWiring {
  const { repositories, clock, bus, logger } = deps;
  const resolver = new HostResolver({
    servers: settings.dnsServers,
    timeoutMs: settings.dnsTimeoutMs,
    perOwner: settings.dnsLookupsPerTenant,
    clock,
  });
  const service = new WebhookAdministration({
    tenants: repositories.tenants,
    webhooks: repositories.webhooks,
    events: repositories.webhookEvents,
    clock,
    urlPolicy: { allowPrivate: settings.webhookAllowPrivate, allowedHosts: settings.webhookAllowedHosts },
    resolveHost: (host, tenantId) => resolver.resolve(host, tenantId),
    rotateGraceMs: settings.webhookRotateGraceHours * 3_600_000,
    // Unannounced, other instances sign with the secrets they hold until their copies expire (5 s).
    secretsChanged: (webhookId) =>
      bus
        .publish(`webhook:${webhookId}`)
        .catch((error: unknown) =>
          logger.warn(
            { err: error, webhook: webhookId },
            'a webhook secret change is saved but could not be announced: other instances sign with the secrets they hold for up to 5 s',
          ),
        ),
  });
  return { resolver, service };
}

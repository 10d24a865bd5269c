/**
 * Wires tenants' webhooks: the resolver of the hosts tenants control (webhook endpoints, and the
 * providers' hosts the worker connects to) and the webhook service of the admin API and the CLI.
 */
import { HostResolver } from '../infra/host-resolver.js';
import type { Clock } from '../limiter/index.js';
import { SqlWebhookService, type WebhookServiceDeps } from '../services/webhook-service.js';
import type { Settings } from '../settings/settings.js';

export interface WebhookWiring {
  resolver: HostResolver;
  service: SqlWebhookService;
}

export function createWebhooks(
  settings: Settings,
  deps: Pick<WebhookServiceDeps, 'tenants' | 'webhooks' | 'events'> & { clock: Clock },
): WebhookWiring {
  const { clock } = deps;
  const resolver = new HostResolver({
    servers: settings.dnsServers,
    timeoutMs: settings.dnsTimeoutMs,
    perOwner: settings.dnsLookupsPerTenant,
    clock,
  });
  const service = new SqlWebhookService({
    ...deps,
    urlPolicy: { allowPrivate: settings.webhookAllowPrivate, allowedHosts: settings.webhookAllowedHosts },
    resolveHost: (host, tenantId) => resolver.resolve(host, tenantId),
    rotateGraceMs: settings.webhookRotateGraceHours * 3_600_000,
  });
  return { resolver, service };
}

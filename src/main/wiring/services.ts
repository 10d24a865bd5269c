/**
 * The services wing: what the entry points (HTTP, CLI) call, each over the repositories, the
 * caches and the backend's limiter. Writes that change what other instances cache announce it.
 */
import type { Logger } from 'pino';
import { AnnouncingMessageWriter } from '../../admission/adapters/message-writer.js';
import type { AdmissionOutcome } from '../../admission/context.js';
import { recordConfirmation, releaseFraudCounts } from '../../admission/interceptors/fraud.js';
import { releaseFrequencySlot } from '../../admission/interceptors/frequency.js';
import type { NewMessage } from '../../admission/ports.js';
import { subjectTenant } from '../../admission/subjects.js';
import { unavailableUnlessSluiceError } from '../../core/errors.js';
import type { HostResolver } from '../../infra/host-resolver.js';
import { ThrottledLog } from '../../infra/throttled-log.js';
import type { Clock } from '../../limiter/index.js';
import type { Metrics } from '../../metrics/index.js';
import { AdminLookups } from '../../services/admin-lookup-service.js';
import { BanAdministration } from '../../services/ban-administration.js';
import { BlacklistAdministration } from '../../services/blacklist-administration.js';
import type { Services } from '../../services/contracts.js';
import { FraudAdministration } from '../../services/fraud-administration.js';
import { LimiterFrequencyCheckService } from '../../services/frequency-check-service.js';
import { ReadinessService } from '../../services/health-service.js';
import { AdmittingMessageService } from '../../services/message-service.js';
import { ProviderAdministration } from '../../services/provider-administration.js';
import { ReceiptIntake } from '../../services/receipt-service.js';
import { RuleAdministration } from '../../services/rule-administration.js';
import { TemplateAdministration } from '../../services/template-administration.js';
import { TenantAdministration } from '../../services/tenant-administration.js';
import type { Settings } from '../../settings/settings.js';
import { newTenantRules } from '../../settings/tenant-settings.js';
import type { Backend } from '../backend/backend.js';
import type { CloseStack } from '../close-stack.js';
import { lazily, once } from '../lazily.js';
import { createRiskControl } from '../risk-control.js';
import { createWebhooks } from '../webhooks.js';
import { type ConfigCaches, createAdmissionChain, fraudLimiter } from './admission.js';
import type { StorageWing } from './storage.js';

export interface ServicesWing {
  services: Services;
  /** Resolves the hosts tenants control (webhook endpoints, their providers): bounded, off the thread pool. */
  resolver(): HostResolver;
  /** Subscribes to every accepted message, after its commit (the due feed). */
  onAccepted(listener: (message: NewMessage, outcome: AdmissionOutcome) => void): void;
}

interface WingContext {
  settings: Settings;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  backend: Backend;
  storage: StorageWing;
  closers: CloseStack;
}

export function createServices(context: WingContext, caches: ConfigCaches): ServicesWing {
  const { settings, clock, logger, metrics, backend, storage, closers } = context;
  const { repositories } = storage;
  const { directory, tenantConfigs } = caches;
  const { limiter } = backend;
  const tenantOf = async (tenantId: string) => (await tenantConfigs.get(tenantId))?.tenant;

  const acceptedListeners: ((message: NewMessage, outcome: AdmissionOutcome) => void)[] = [];
  const chain = once(() =>
    createAdmissionChain(
      context,
      caches,
      new AnnouncingMessageWriter(repositories.messages, settings.maxAttempts, (message, outcome) => {
        for (const listener of acceptedListeners) listener(message, outcome);
      }),
    ),
  );
  const riskControl = once(() => {
    const wiring = createRiskControl({
      cacheOptions: caches.options,
      repository: repositories.riskRules,
      tenant: tenantOf,
      backend,
      oneCall: settings.riskOneCall,
      metrics,
      logger,
    });
    closers.push(() => wiring.close());
    return wiring;
  });
  const webhooks = once(() => {
    const wiring = createWebhooks(settings, { repositories, clock, bus: backend.configBus, logger });
    closers.push(() => wiring.resolver.close());
    return wiring;
  });

  // Other instances drop the tenant's cached bans; unannounced, they hold at most SLUICE_BAN_CACHE_MS.
  const announceBans =
    (subject: string) =>
    async <T>(result: T): Promise<T> => {
      await backend.configBus
        .publish(`bans:${subjectTenant(subject)}`)
        .catch((error: unknown) =>
          logger.warn(
            { err: error },
            'a lifted ban could not be announced: other instances may answer it banned for up to SLUICE_BAN_CACHE_MS',
          ),
        );
      return result;
    };
  const fraud = { policies: caches.fraud, limiter: fraudLimiter(backend) };
  // A canceled message gives back its frequency slot (a scheduled one holds it at its due time),
  // its prefix and conversion counts, and its estimated cost (once: the refund clears it).
  const releaseSlot = async (tenantId: string, id: string) => {
    try {
      const message = await repositories.messages.findById(tenantId, id);
      if (message) {
        await Promise.all([
          releaseFrequencySlot(directory, backend.frequency, message, settings.defaultRegion),
          releaseFraudCounts(fraud, message),
          message.costMicros === null ? undefined : repositories.smsSpend.refund(tenantId, id, clock.now()),
        ]);
      }
    } catch (error) {
      logger.error({ err: error, messageId: id }, 'cancel: giving the frequency slot, fraud counts or spend back failed');
    }
  };
  // A confirmed SMS counts one conversion; failing to count it never fails the feedback.
  const confirmed = async (message: Parameters<typeof recordConfirmation>[1]) => {
    try {
      await recordConfirmation(fraud, message, clock.now());
    } catch (error) {
      logger.error({ err: error, messageId: message.id }, 'feedback: counting the conversion failed');
    }
  };
  // Lifting a ban has no fallback: with Redis away it is a 503, not a 500.
  const banLimiter = {
    unban: (subject: string) => limiter.unban(subject).then(announceBans(subject), unavailableUnlessSluiceError),
    reset: (subject: string) => limiter.reset(subject).then(announceBans(subject), unavailableUnlessSluiceError),
  };
  const services = lazily<Services>({
    messages: () =>
      new AdmittingMessageService(chain(), repositories.messages, clock, releaseSlot, settings.batchRenderLimitBytes, confirmed),
    frequencyChecks: () =>
      new LimiterFrequencyCheckService({
        tenant: tenantOf,
        limiter,
        degrading: backend.kind === 'embedded' ? undefined : backend.degrading,
        onDecision: (decision) =>
          metrics.decisions.inc({
            outcome: decision.code,
            channel: 'none',
            rule: decision.rule === undefined ? 'none' : String(decision.rule),
          }),
      }),
    riskEvents: () => riskControl().service,
    tenants: (): TenantAdministration =>
      new TenantAdministration({
        tenants: repositories.tenants,
        backlog: repositories.backlog,
        clock,
        directory,
        newTenantRules: {
          rules: newTenantRules(settings.newTenantRules),
          set: (tenantId, channel, rules): Promise<unknown> => services.rules.setRules(tenantId, channel, rules),
        },
      }),
    rules: () =>
      new RuleAdministration({
        tenants: repositories.tenants,
        rules: repositories.rules,
        riskRules: repositories.riskRules,
        directory,
        riskRulesChanged: (tenantId, action) => riskControl().invalidate(tenantId, action),
        riskStateMaxBytes: settings.riskStateMaxBytes,
      }),
    blacklists: () =>
      new BlacklistAdministration({
        tenants: repositories.tenants,
        blacklist: repositories.blacklist,
        defaultRegion: settings.defaultRegion,
        blacklistChanged: () => caches.blacklistChanged(),
      }),
    providers: () => new ProviderAdministration({ tenants: repositories.tenants, providers: repositories.providers }),
    bans: () => new BanAdministration({ tenants: repositories.tenants, limiter: banLimiter, defaultRegion: settings.defaultRegion }),
    // A peek has no fallback either: with Redis away it is a 503.
    lookups: () => new AdminLookups({ ...repositories, limiter, clock, defaultRegion: settings.defaultRegion }),
    health: () =>
      new ReadinessService({
        database: storage.database,
        probes: backend.probes,
        errors: new ThrottledLog<{ err: unknown; check: string }>((fields) => logger.warn(fields, 'readiness check failed'), clock),
      }),
    templates: () =>
      new TemplateAdministration({
        tenants: repositories.tenants,
        templates: repositories.templates,
        quietHours: repositories.quietHours,
        invalidateTemplate: (tenantId, channel, name) => caches.templates.invalidate(tenantId, channel, name),
        invalidateQuietHours: (tenantId, channel) => caches.quietHours.invalidate(tenantId, channel),
        shapes: caches.shapes,
      }),
    webhooks: () => webhooks().service,
    fraud: () =>
      new FraudAdministration({
        tenants: repositories.tenants,
        fraud: repositories.fraud,
        spend: repositories.smsSpend,
        limiter,
        clock,
        invalidatePolicy: (tenantId) => caches.fraud.invalidatePolicy(tenantId),
        invalidatePrices: () => caches.fraud.invalidatePrices(),
        shapes: caches.shapes,
      }),
    receipts: () =>
      new ReceiptIntake({
        providers: repositories.providers,
        receipts: repositories.receipts,
        clock,
        onReceipt: (provider, outcome, delivered, count) =>
          metrics.receipts.inc(
            { provider, outcome, status: delivered === undefined ? 'none' : delivered ? 'delivered' : 'undelivered' },
            count,
          ),
      }),
  });
  return {
    services,
    resolver: () => webhooks().resolver,
    onAccepted: (listener) => acceptedListeners.push(listener),
  };
}

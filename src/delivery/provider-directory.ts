/**
 * The providers of each tenant channel, in failover order, built from the stored rows, and the
 * pace of each: the worker role's `ProviderDirectory`.
 */
import type { Logger } from 'pino';
import type { Channel } from '../core/channels.js';
import type { HostResolver } from '../infra/host-resolver.js';
import type { Clock, Rule } from '../limiter/index.js';
import { type Provider, ProviderError } from '../providers/provider.js';
import { createProvider } from '../providers/registry.js';
import type { Message } from '../storage/repositories/messages.js';
import { type StoredProvider, UnopenableSecretError } from '../storage/repositories/providers.js';
import { PaceQueue } from './pace-queue.js';
import type { PaceLimiter, ProviderRecords } from './ports.js';

/** The providers of a tenant channel, in failover order, and the pace of each. */
export interface ProviderDirectory {
  providersFor(tenantId: string, channel: Channel): Promise<Provider[]>;
  /**
   * Resolves when `provider` may send one more message (waits, never fails, when over its QPS);
   * the waiters of a process go transactional first, then bulk, each lane's tenants by weighted
   * round-robin. Rejects only when `signal` aborts the wait.
   */
  pace(provider: Provider, message: Pick<Message, 'priority' | 'tenantId'>, signal?: AbortSignal): Promise<void>;
}

export interface ProviderDirectoryDeps {
  providers: ProviderRecords;
  /** Paces every provider to its QPS; shared through Redis when configured. */
  limiter: PaceLimiter;
  clock: Clock;
  logger: Logger;
  /** The tenants' send weights: their shares of a shared provider's pace. Absent: 1 each. */
  weights?: () => ReadonlyMap<string, number>;
  /** Resolves each provider's host, bounded per owner (its tenant, or `*` for shared ones); absent: `dns.lookup`. */
  resolver?: Pick<HostResolver, 'lookupFor'>;
}

const PROVIDER_CACHE_MS = 5000;

const validQps = (qps: number) => Number.isInteger(qps) && qps >= 1;

/**
 * A provider's pace: `qps` in every second, and at most a fiftieth of a second's worth (at least
 * one send) in each `1000 · burst / qps` ms, so the sends of a second are spread over it: at 20
 * QPS one every 50 ms, at 1000 QPS 20 every 20 ms.
 */
export function paceRules(qps: number): [Rule, Rule] {
  const burst = Math.ceil(qps / 50);
  return [
    { windowMs: 1000, limit: qps, algorithm: 'sliding-log' },
    { windowMs: Math.max(1, Math.round((1000 * burst) / qps)), limit: burst, algorithm: 'sliding-log' },
  ];
}

/** Providers per tenant channel from SQL (cached for a few seconds), each paced to its QPS through the shared limiter. */
export class SqlProviderDirectory implements ProviderDirectory {
  private readonly cache = new Map<string, { providers: Promise<Provider[]>; expiresAt: number }>();
  private readonly built = new Map<string, Provider>();
  private readonly paceRules = new Map<string, Rule[]>();
  private readonly paceQueues = new Map<string, PaceQueue>();
  private readonly qps = new Map<string, number>();
  /** Tenant channels already warned about having no provider. */
  private readonly warnedFallback = new Set<string>();

  constructor(
    private readonly deps: ProviderDirectoryDeps,
    private readonly fallback: Provider,
  ) {}

  providersFor(tenantId: string, channel: Channel): Promise<Provider[]> {
    const key = `${tenantId}:${channel}`;
    const now = this.deps.clock.now();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) return cached.providers;
    const providers = this.load(tenantId, channel);
    this.cache.set(key, { providers, expiresAt: now + PROVIDER_CACHE_MS });
    providers.catch(() => this.cache.delete(key));
    return providers;
  }

  private async load(tenantId: string, channel: Channel): Promise<Provider[]> {
    const rows = await this.deps.providers.listEnabledFor(tenantId, channel);
    if (rows.length === 0) return (await this.consoleServes(tenantId, channel)) ? [this.fallback] : [];
    const result: Provider[] = [];
    for (const row of rows) {
      const version = `${row.id}@${row.updatedAt}`;
      // The qps is checked on every load: an edit in SQL need not change `updated_at`.
      let provider = validQps(row.qps) ? this.built.get(version) : undefined;
      let usable = provider !== undefined;
      if (!provider) {
        ({ provider, usable } = await this.build(row));
        if (usable) this.built.set(version, provider);
        else this.built.delete(version);
      }
      // A stand-in is not paced: it makes no request, and must not use up the real one's QPS.
      if (usable) this.qps.set(provider.id, row.qps);
      else this.qps.delete(provider.id);
      result.push(provider);
    }
    return result;
  }

  /**
   * The console provider is the embedded default: it serves a tenant channel without providers
   * only while no provider at all is stored (a disabled one counts). On a server with providers, a tenant channel
   * without one was forgotten, and printing its messages would put recipients and codes in the
   * log and count them as sent: they fail instead ("no provider configured"), said once per
   * tenant channel and process.
   */
  private async consoleServes(tenantId: string, channel: Channel): Promise<boolean> {
    // Stored, not enabled: disabling the last provider must not bring the printing back.
    if (!(await this.deps.providers.anyStored())) return true;
    const key = `${tenantId}:${channel}`;
    if (!this.warnedFallback.has(key)) {
      this.warnedFallback.add(key);
      this.deps.logger.warn(
        { tenant: tenantId, channel },
        'no enabled provider for this tenant channel, while other providers are configured: its messages fail (no provider configured)',
      );
    }
    return false;
  }

  /**
   * The client of a stored provider. When its stored settings cannot make one (a row edited by
   * hand in SQL, a secret sealed with another key), a stand-in whose every send fails retryably
   * with the reason: the message moves on to the next provider and the reason is in its
   * attempts, instead of every send of the channel failing before it is even tried. A stand-in is
   * not kept: the next load (within `PROVIDER_CACHE_MS`) looks again. A failure to read the
   * secret from the database is no stand-in: the load fails, as any read of it would.
   */
  private async build(row: StoredProvider): Promise<{ provider: Provider; usable: boolean }> {
    let sealed: string | undefined;
    try {
      sealed = row.hasSecret ? await this.deps.providers.revealSecret(row.id) : undefined;
    } catch (error) {
      if (!(error instanceof UnopenableSecretError)) throw error;
      return { provider: this.standIn(row, error), usable: false };
    }
    try {
      // From here on nothing is read: whatever fails is the row's settings.
      if (!validQps(row.qps)) throw new Error(`qps must be an integer of at least 1, got ${row.qps}`);
      const secret = JSON.parse(sealed ?? '{}') as Record<string, string>;
      // Built under its name, which its errors (in attempts and logs) then carry, as the metrics
      // do; the id stays what paces it and what attempts record.
      const client = createProvider(
        { id: row.name, kind: row.kind, channel: row.channel, config: row.config, secret },
        { clock: this.deps.clock, ...(this.deps.resolver ? { lookup: this.deps.resolver.lookupFor(row.scope) } : {}) },
      );
      return { provider: Object.assign(client, { id: row.id, name: row.name }), usable: true };
    } catch (error) {
      return { provider: this.standIn(row, error), usable: false };
    }
  }

  private standIn(row: StoredProvider, problem: unknown): Provider {
    const reason = `provider ${row.name} cannot be used: ${(problem as Error).message}`;
    this.deps.logger.error({ provider: row.id, err: problem }, 'a stored provider cannot be used; its sends fail over until it is fixed');
    return {
      id: row.id,
      name: row.name,
      kind: row.kind,
      channel: row.channel,
      send: () => Promise.reject(new ProviderError(reason, { retryable: true, code: 'MISCONFIGURED' })),
    };
  }

  /**
   * Waits until the provider may take one more send (shared through Redis when configured). An
   * exact sliding log of one second, not a token bucket: a vendor's "N per second" holds in every
   * second, and a bucket's burst plus refill would let up to 2N − 1 through some one-second window.
   * A second log spaces the sends evenly ({@link paceRules}), so a send of another tenant or lane
   * waits about 1/qps, not for the next second.
   */
  pace(provider: Provider, message: Pick<Message, 'priority' | 'tenantId'>, signal?: AbortSignal): Promise<void> {
    const qps = this.qps.get(provider.id);
    if (!qps) return Promise.resolve();
    let queue = this.paceQueues.get(provider.id);
    if (!queue) {
      queue = new PaceQueue(
        () => this.checkPace(provider.id),
        // A round checks what one spacing window lets through: the rest would be denied.
        () => paceRules(this.qps.get(provider.id) ?? 1)[1].limit,
        (tenantId) => this.deps.weights?.().get(tenantId) ?? 1,
      );
      this.paceQueues.set(provider.id, queue);
    }
    return queue.enter(message.priority, signal, message.tenantId);
  }

  /** One send's worth of the provider's QPS now, at its current rate (an edit applies at once). */
  private async checkPace(providerId: string): Promise<{ allowed: boolean; retryAfterMs: number }> {
    const qps = this.qps.get(providerId);
    if (!qps) return { allowed: true, retryAfterMs: 0 };
    let rules = this.paceRules.get(providerId);
    if (rules?.[0]?.limit !== qps) {
      rules = paceRules(qps);
      this.paceRules.set(providerId, rules);
    }
    return this.deps.limiter.check({ subject: `pace:${providerId}`, rules });
  }
}

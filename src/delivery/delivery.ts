/**
 * The worker role: a dispatcher for every (channel, partition), locks and due index from Redis when
 * configured (else in process and SQL), providers from SQL with the console provider as the
 * fallback of the embedded default, and provider pacing through the shared limiter.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { CHANNELS, type Channel } from '../core/channels.js';
import { createInProcessLockFactory, createRedisLockFactory, type LockFactory } from '../infra/lock/index.js';
import type { Rule } from '../limiter/index.js';
import { type DueFeed, startDueFeed } from '../main/due-feed.js';
import type { Runtime } from '../main/runtime.js';
import { type Provider, ProviderError } from '../providers/provider.js';
import { createProvider } from '../providers/registry.js';
import { type Provider as StoredProvider, UnopenableSecretError } from '../storage/repositories/providers.js';
import { Dispatcher, type ProviderDirectory, partitionName } from './dispatcher.js';
import { type DueIndex, RedisDueIndex } from './due-index/index.js';
import { watchResumes } from './resume-watch.js';
import { RetentionPurger } from './retention.js';
import { WorkerRoster } from './roster.js';

const PROVIDER_CACHE_MS = 5000;

const validQps = (qps: number) => Number.isInteger(qps) && qps >= 1;

/** Providers per tenant channel from SQL (cached for a few seconds), each paced to its QPS through the shared limiter. */
export class SqlProviderDirectory implements ProviderDirectory {
  private readonly cache = new Map<string, { providers: Promise<Provider[]>; expiresAt: number }>();
  private readonly built = new Map<string, Provider>();
  private readonly paceRules = new Map<string, Rule[]>();
  private readonly qps = new Map<string, number>();
  /** Tenant channels already warned about having no provider. */
  private readonly warnedFallback = new Set<string>();

  constructor(
    private readonly runtime: Runtime,
    private readonly fallback: Provider,
  ) {}

  providersFor(tenantId: string, channel: Channel): Promise<Provider[]> {
    const key = `${tenantId}:${channel}`;
    const now = this.runtime.clock.now();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) return cached.providers;
    const providers = this.load(tenantId, channel);
    this.cache.set(key, { providers, expiresAt: now + PROVIDER_CACHE_MS });
    providers.catch(() => this.cache.delete(key));
    return providers;
  }

  private async load(tenantId: string, channel: Channel): Promise<Provider[]> {
    const { providers: repository } = this.runtime.repositories;
    const rows = await repository.listEnabledFor(tenantId, channel);
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
    if (!(await this.runtime.repositories.providers.anyStored())) return true;
    const key = `${tenantId}:${channel}`;
    if (!this.warnedFallback.has(key)) {
      this.warnedFallback.add(key);
      this.runtime.logger.warn(
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
      sealed = row.hasSecret ? await this.runtime.repositories.providers.revealSecret(row.id) : undefined;
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
        { clock: this.runtime.clock },
      );
      return { provider: Object.assign(client, { id: row.id, name: row.name }), usable: true };
    } catch (error) {
      return { provider: this.standIn(row, error), usable: false };
    }
  }

  private standIn(row: StoredProvider, problem: unknown): Provider {
    const reason = `provider ${row.name} cannot be used: ${(problem as Error).message}`;
    this.runtime.logger.error(
      { provider: row.id, err: problem },
      'a stored provider cannot be used; its sends fail over until it is fixed',
    );
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
   */
  async pace(provider: Provider, signal?: AbortSignal): Promise<void> {
    const qps = this.qps.get(provider.id);
    if (!qps) return;
    let rules = this.paceRules.get(provider.id);
    if (rules?.[0]?.limit !== qps) {
      rules = [{ windowMs: 1000, limit: qps, algorithm: 'sliding-log' }];
      this.paceRules.set(provider.id, rules);
    }
    for (;;) {
      signal?.throwIfAborted();
      const decision = await this.runtime.limiter.check({ subject: `pace:${provider.id}`, rules });
      if (decision.allowed) return;
      await sleep(Math.max(1, decision.retryAfterMs), undefined, signal ? { signal } : {});
    }
  }
}

export interface Delivery {
  readonly dispatchers: Dispatcher[];
  stop(): Promise<void>;
}

export interface DeliveryOptions {
  /**
   * The process's feed of accepted messages (`startDueFeed`), when it also serves the API. Without
   * one, delivery starts its own and closes it on stop.
   */
  feed?: DueFeed;
}

export function startDelivery(runtime: Runtime, consoleProvider: Provider, options: DeliveryOptions = {}): Delivery {
  const { settings, redis } = runtime;
  const locks: LockFactory = redis
    ? createRedisLockFactory({ client: redis as Redis, leaseMs: settings.leaseMs, keyPrefix: settings.redisKeyPrefix })
    : createInProcessLockFactory();
  const dueIndex: DueIndex | undefined = redis
    ? new RedisDueIndex({ client: redis as Redis, keyPrefix: settings.redisKeyPrefix })
    : undefined;
  const providers = new SqlProviderDirectory(runtime, consoleProvider);
  // Several workers share the partitions (roster.ts); without Redis there is one worker.
  const roster = redis
    ? new WorkerRoster({
        client: redis as Redis,
        keyPrefix: settings.redisKeyPrefix,
        partitions: CHANNELS.length * settings.partitions,
        leaseMs: settings.leaseMs,
        logger: runtime.logger,
      })
    : undefined;
  const dispatchers: Dispatcher[] = [];
  const byPartition = new Map<string, Dispatcher>();
  for (const channel of CHANNELS) {
    for (let partition = 0; partition < settings.partitions; partition++) {
      const dispatcher = new Dispatcher({
        channel,
        partition,
        partitions: settings.partitions,
        lock: locks.createLock(`dispatch:${partitionName(channel, partition)}`),
        messages: runtime.repositories.messages,
        providers,
        ...(dueIndex ? { dueIndex } : {}),
        clock: runtime.clock,
        logger: runtime.logger,
        metrics: runtime.metrics,
        pollMs: settings.pollMs,
        leaseMs: settings.leaseMs,
        concurrency: settings.sendConcurrency,
        retryBaseMs: settings.retryBaseMs,
        retryMaxMs: settings.retryMaxMs,
        ...(roster ? { share: roster } : {}),
      });
      dispatchers.push(dispatcher);
      byPartition.set(dispatcher.name, dispatcher);
    }
  }
  // The first beat before the first lock: a worker joining others knows its share from the start.
  let stopped = false;
  const started = (roster ? roster.start() : Promise.resolve()).then(() => {
    if (!stopped) for (const dispatcher of dispatchers) dispatcher.start();
  });
  const purger =
    settings.retentionDays > 0
      ? new RetentionPurger({
          messages: runtime.repositories.messages,
          clock: runtime.clock,
          logger: runtime.logger,
          retentionDays: settings.retentionDays,
          onPurged: (count) => runtime.metrics.messagesPurged.inc(count),
        })
      : undefined;
  purger?.start();
  const feed = options.feed ?? startDueFeed(runtime);
  const stopWaking = feed.onWake((partition, dueAt) => {
    // '*' (the wake channel was reconnected: anything may have been missed) wakes every dispatcher,
    // a holder or one waiting to take its lock now that Redis is back. A partition's wake, sent for
    // every batch of accepts by every instance, only its holder: a non-holder would try to take
    // the lock at each one; it tries at its own pace, every poll.
    if (partition === undefined) for (const dispatcher of dispatchers) dispatcher.wakeBy(dueAt);
    else {
      const dispatcher = byPartition.get(partition);
      if (dispatcher?.holdsLock()) dispatcher.wakeBy(dueAt);
    }
  });
  // A resumed tenant's messages are due again: the holders rebuild their index and tick at once.
  const resumes = watchResumes(runtime, (tenantIds) => {
    runtime.logger.info({ tenants: tenantIds }, 'tenants resumed: their held messages are due again');
    for (const dispatcher of dispatchers) if (dispatcher.holdsLock()) dispatcher.refeed();
  });
  return {
    dispatchers,
    async stop() {
      await resumes.stop();
      stopWaking();
      stopped = true;
      await started;
      await Promise.all([...dispatchers.map((dispatcher) => dispatcher.stop()), purger?.stop()]);
      await roster?.stop();
      if (!options.feed) await feed.close();
    },
  };
}

/**
 * The limiter on Redis: the Redis store with its ban cache (dropped everywhere by the change bus)
 * and token leases, behind the breaker whose fallback counts in process.
 */
import { isRiskSubject, subjectTenant } from '../../admission/subjects.js';
import type { ChangeBus } from '../../infra/change-bus.js';
import { SlowCallLog } from '../../infra/slow-call-log.js';
import { DegradingLimiter, EventLoopLag } from '../../limiter/degrade/index.js';
import { type FallbackMode, Limiter, RedisStore, type RedisStoreClient, TokenLeases } from '../../limiter/index.js';
import { recordDegradationEvent } from '../../metrics/index.js';
import type { BackendContext } from './types.js';

export function redisLimiter(
  { settings, clock, logger, metrics, keySecret }: BackendContext,
  client: RedisStoreClient,
  configBus: ChangeBus,
  local: Limiter,
  closers: (() => Promise<unknown> | unknown)[],
): { limiter: Limiter; degrading: DegradingLimiter } {
  const prefix = settings.redisKeyPrefix;
  const cacheLookup = (cache: 'ban' | 'lease') => (result: 'hit' | 'miss') => metrics.limiterCacheLookups.inc({ cache, result });
  const limiter = new Limiter({
    store: new RedisStore({
      client,
      keySecret,
      prefix: `${prefix}limiter`,
      ...(settings.redisSlotGroups > 0 ? { slotGroups: settings.redisSlotGroups } : {}),
    }),
    // Bans answered in process; dropped everywhere by the bus (below). Sluice's request ids are
    // message ids made per request, never retried; a risk check's are the tenant's own.
    banCache:
      settings.banCacheMs > 0
        ? {
            maxTtlMs: settings.banCacheMs,
            ownerOf: subjectTenant,
            answerRequestIds: (subject) => !isRiskSubject(subject),
            clock,
            onLookup: cacheLookup('ban'),
          }
        : false,
    // Tenant QPS rules are `lease: true` (quota.ts): blocks leased from Redis, spent here.
    ...(settings.limiterLeaseMs > 0
      ? {
          leases: new TokenLeases({
            client,
            keySecret,
            prefix: `${prefix}limiter:lease`,
            leaseMs: settings.limiterLeaseMs,
            clock,
            onLookup: cacheLookup('lease'),
          }),
        }
      : {}),
  });
  closers.unshift(() => limiter.close());
  // An unban or reset (`bans:<tenant>`) or a tenant's rule change (`tenant:<id>`) anywhere drops
  // that tenant's cached bans; '*' (announcements may have been missed) drops all.
  closers.unshift(
    configBus.subscribe((key) => {
      if (key === '*') limiter.invalidate();
      else if (key.startsWith('tenant:')) limiter.invalidateOwner(key.slice('tenant:'.length));
      else if (key.startsWith('bans:')) limiter.invalidateOwner(key.slice('bans:'.length));
    }),
  );
  // The breaker judges Redis by what Redis adds: this process's own loop lag is taken off.
  const loopLag = new EventLoopLag();
  closers.unshift(() => loopLag.close());
  const slowCalls = new SlowCallLog((summary) => logger.warn(summary, 'slow Redis limiter calls'), clock);
  const degrading = new DegradingLimiter({
    primary: limiter,
    local,
    policy: { mode: settings.fallbackMode as FallbackMode, divideBy: settings.fallbackDivideBy, sampleRate: settings.sampleRate },
    breaker: { degradeMs: settings.degradeMs, alertMs: settings.degradeAlertMs, openMs: settings.breakerOpenMs, loopLag },
    timeoutMs: settings.redisTimeoutMs,
    listener: (event) => {
      recordDegradationEvent(metrics, event);
      if (event.type === 'state') logger.warn({ from: event.from, to: event.to }, 'limiter breaker changed state');
      if (event.type === 'alert') slowCalls.record(event.ms);
    },
  });
  metrics.setBreakerState(() => degrading.state());
  return { limiter, degrading };
}

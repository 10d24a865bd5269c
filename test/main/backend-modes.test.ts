/**
 * The backend's modes are types: `Backend` is a union on `kind` (embedded, Redis, Redis Cluster),
 * the broker a second axis on its own `kind`, and no member of any of them is undefined to stand
 * for a mode (the compiler checks the type assertions; the run checks what `createBackend` makes).
 */
import pino from 'pino';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ManualClock } from '../../src/limiter/index.js';
import {
  type Backend,
  type BrokerAxis,
  backendChoiceOf,
  createBackend,
  type EmbeddedBackend,
  type RedisBackend,
} from '../../src/main/backend/backend.js';
import { Metrics } from '../../src/metrics/index.js';
import { loadSettings } from '../../src/settings/settings.js';

/** The members of `T` whose value, or whose method's result, may be undefined. */
type UndefinedMembers<T> = {
  [K in keyof T]-?: undefined extends T[K] ? K : T[K] extends (...args: never[]) => infer R ? (undefined extends R ? K : never) : never;
}[keyof T];

describe('backend modes', () => {
  it('no member of any mode may be undefined', () => {
    expectTypeOf<UndefinedMembers<EmbeddedBackend>>().toEqualTypeOf<never>();
    expectTypeOf<UndefinedMembers<RedisBackend>>().toEqualTypeOf<never>();
    expectTypeOf<UndefinedMembers<Extract<BrokerAxis, { kind: 'jetstream' }>>>().toEqualTypeOf<never>();
    expectTypeOf<Backend['kind']>().toEqualTypeOf<'embedded' | 'redis' | 'redis-cluster'>();
    expectTypeOf<BrokerAxis['kind']>().toEqualTypeOf<'none' | 'jetstream'>();
    // The check itself: a member that may be undefined is named.
    expectTypeOf<UndefinedMembers<{ a: number; b: string | undefined; c(): number | undefined }>>().toEqualTypeOf<'b' | 'c'>();
  });

  it('the settings decide the kind once, with where Redis is', () => {
    expect(backendChoiceOf({ redisUrl: '', redisClusterNodes: [] })).toEqual({ kind: 'embedded' });
    expect(backendChoiceOf({ redisUrl: 'redis://r:6379', redisClusterNodes: [] })).toEqual({ kind: 'redis', url: 'redis://r:6379' });
    expect(backendChoiceOf({ redisUrl: 'redis://r:6379', redisClusterNodes: ['a:7000'] })).toEqual({
      kind: 'redis-cluster',
      nodes: ['a:7000'],
    });
  });

  it('embedded without a broker: its in-process store, and the broker axis none', async () => {
    const settings = loadSettings({ SLUICE_DB_URL: 'sqlite::memory:' });
    const backend = createBackend({
      settings,
      clock: new ManualClock(0),
      logger: pino({ level: 'silent' }),
      metrics: new Metrics(),
      keySecret: Buffer.alloc(32),
    });
    try {
      expect(backend.kind).toBe('embedded');
      expect(backend.broker).toEqual({ kind: 'none' });
      if (backend.kind === 'embedded') expect(backend.memoryStore.size).toBe(0);
    } finally {
      await backend.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import { migrationsFor } from '../../src/storage/migrations/index.js';
import { BlacklistRepository } from '../../src/storage/repositories/blacklist.js';

describe('migration 0002: provider names unique in their scope and channel', () => {
  it('renames the later of providers that share a name, then refuses a new duplicate', async () => {
    const database = await openDatabase('sqlite::memory:');
    try {
      const migrations = migrationsFor('sqlite');
      await migrations['0001-initial']!.up(database.db);
      const row = (id: string, name: string, channel: 'sms' | 'email' = 'sms') => ({
        id,
        scope: '*',
        channel,
        kind: 'console' as const,
        name,
        priority: 1,
        qps: 1,
        config: '{}',
        secret: null,
        enabled: 1,
        created_at: 0,
        updated_at: 0,
      });
      // Made before the name was checked, or by two creates racing the check.
      await database.db
        .insertInto('providers')
        .values([row('01A', 'main'), row('01B', 'main'), row('01C', 'main'), row('01D', 'main', 'email')])
        .execute();

      await migrations['0002-provider-name-unique']!.up(database.db);
      const names = await database.db.selectFrom('providers').select(['id', 'name']).orderBy('id').execute();
      expect(names).toEqual([
        { id: '01A', name: 'main' },
        { id: '01B', name: 'main (01B)' },
        { id: '01C', name: 'main (01C)' },
        { id: '01D', name: 'main' }, // another channel: not a duplicate
      ]);
      await expect(database.db.insertInto('providers').values(row('01E', 'main')).execute()).rejects.toThrow();

      await migrations['0002-provider-name-unique']!.down!(database.db);
      await database.db.insertInto('providers').values(row('01E', 'main')).execute();
    } finally {
      await database.close();
    }
  });
});

describe('migration 0004: blacklist entries under canonical keys', () => {
  it('rewrites entries to their keys, reads * entries on every channel, merges into the oldest', async () => {
    const database = await openDatabase('sqlite::memory:');
    try {
      const migrations = migrationsFor('sqlite', { defaultRegion: 'CN' });
      await migrations['0001-initial']!.up(database.db);
      await migrations['0002-provider-name-unique']!.up(database.db);
      const row = (
        scope: string,
        channel: 'sms' | 'email' | 'webhook' | '*',
        recipient: string,
        createdAt: number,
        reason: string | null = null,
      ) => ({
        scope,
        channel,
        recipient,
        reason,
        created_at: createdAt,
      });
      // As the old build stored them: emails with their local part as written, names as written,
      // URLs with their fragment, a * entry typed by its shape.
      await database.db
        .insertInto('blacklist')
        .values([
          row('t1', 'email', 'bob@example.com', 2, 'newer'),
          row('t1', 'email', 'Bob+x@example.com', 1, 'older'),
          row('t1', 'email', 'John.Doe@googlemail.com', 3),
          row('t1', 'webhook', 'OPS-ALERTS', 4),
          row('*', 'webhook', 'https://hooks.example.com/x#1', 5),
          row('*', '*', '138.0013.8002', 6, 'shape'),
          row('*', '*', '+8613800138002', 7),
          row('*', '*', 'Spam@Example.com', 8),
          row('*', 'sms', '+8613800138000', 9),
          row('t1', 'webhook', 'no longer valid!', 10),
        ])
        .execute();

      await migrations['0004-blacklist-canonical-keys']!.up(database.db);
      const rows = await database.db
        .selectFrom('blacklist')
        .select(['scope', 'channel', 'recipient', 'reason', 'created_at'])
        .orderBy('scope')
        .orderBy('channel')
        .orderBy('recipient')
        .execute();
      expect(rows.map((r) => [r.scope, r.channel, r.recipient, r.reason, Number(r.created_at)])).toEqual([
        ['*', '*', '+8613800138002', 'shape', 6],
        ['*', '*', '138.0013.8002', 'shape', 6],
        ['*', '*', 'spam@example.com', null, 8],
        ['*', 'sms', '+8613800138000', null, 9],
        ['*', 'webhook', 'https://hooks.example.com/x', null, 5],
        ['t1', 'email', 'bob@example.com', 'older', 1],
        ['t1', 'email', 'johndoe@gmail.com', null, 3],
        ['t1', 'webhook', 'no longer valid!', null, 10],
        ['t1', 'webhook', 'ops-alerts', null, 4],
      ]);
      // Run by sends' lookups: every spelling now meets its entry.
      const blacklist = new BlacklistRepository(database);
      expect(await blacklist.isBlacklisted('t1', 'sms', '+8613800138002')).toBe(true);
      expect(await blacklist.isBlacklisted('t1', 'webhook', '138.0013.8002')).toBe(true);
      expect(await blacklist.isBlacklisted('t1', 'webhook', 'ops-alerts')).toBe(true);
    } finally {
      await database.close();
    }
  });
});

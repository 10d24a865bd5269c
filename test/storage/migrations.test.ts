import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.js';
import { migrationsFor } from '../../src/storage/migrations/index.js';

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

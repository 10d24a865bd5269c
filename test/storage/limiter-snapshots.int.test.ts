/** The embedded limiter's snapshot row on every database: replaced at each save, a body of megabytes kept whole. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Database, LimiterSnapshotsRepository, migrateToLatest, openDatabase } from '../../src/storage/index.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `limiter snapshots on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let database: Database;
    beforeAll(async () => {
      created = await backend.create();
      database = await openDatabase(created.url);
      await migrateToLatest(database);
    });
    afterAll(async () => {
      await database?.close();
      await created?.drop();
    });

    it('loads the last save of a name, whole', async () => {
      const snapshots = new LimiterSnapshotsRepository(database);
      expect(await snapshots.load('embedded-limiter')).toBeUndefined();
      await snapshots.save('embedded-limiter', 1, '{"first":true}');
      const large = JSON.stringify({ subjects: 'x'.repeat(10 * 1024 * 1024) });
      await snapshots.save('embedded-limiter', 2, large);
      expect(await snapshots.load('embedded-limiter')).toEqual({ takenAt: 2, body: large });
    });
  });
}

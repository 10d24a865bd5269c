/**
 * The embedded limiter's snapshot on every database: replaced at each save, a body of megabytes
 * kept whole though written in parts (a surrogate pair at a part's end included), the old parts
 * and those of a save cut short deleted.
 */
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

    it('keeps a surrogate pair cut by a part whole, and leaves no part of an older or unfinished save', async () => {
      const snapshots = new LimiterSnapshotsRepository(database);
      // A save cut short after its first part.
      await database.db.insertInto('limiter_snapshots').values({ name: 'embedded-limiter#0-stray#0', taken_at: 3, body: 'x' }).execute();
      const body = `{"s":"${'x'.repeat(128 * 1024 - 7)}\u{1F600}${'é'.repeat(300_000)}"}`;
      await snapshots.save('embedded-limiter', 4, body);
      expect(await snapshots.load('embedded-limiter')).toEqual({ takenAt: 4, body });
      const rows = await database.db.selectFrom('limiter_snapshots').select(['name', 'taken_at']).execute();
      // The name's row and the new parts (128 KiB characters each), nothing of saves 2 and 3.
      expect(rows.map((row) => Number(row.taken_at))).toEqual(rows.map(() => 4));
      expect(rows).toHaveLength(1 + Math.ceil(body.length / (128 * 1024)));
    });
  });
}

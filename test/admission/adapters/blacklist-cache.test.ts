import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlacklistCache } from '../../../src/admission/adapters/blacklist-cache.js';
import { InProcessChangeBus } from '../../../src/infra/change-bus.js';
import { type Database, openDatabase } from '../../../src/storage/database.js';
import { migrateToLatest } from '../../../src/storage/migrations/index.js';
import { BlacklistRepository } from '../../../src/storage/repositories/blacklist.js';

describe('BlacklistCache (SQLite)', () => {
  let database: Database;
  let repository: BlacklistRepository;
  let bus: InProcessChangeBus;
  const caches: BlacklistCache[] = [];
  const cache = (maxEntries = 1000, refreshMs = 0) => {
    const created = new BlacklistCache(repository, bus, { maxEntries, refreshMs });
    caches.push(created);
    return created;
  };

  beforeEach(async () => {
    database = await openDatabase('sqlite::memory:');
    await migrateToLatest(database);
    repository = new BlacklistRepository(database);
    bus = new InProcessChangeBus();
  });
  afterEach(async () => {
    for (const created of caches.splice(0)) await created.close();
    await database.close();
  });

  it('answers tenant and global entries, for one channel or all, from memory', async () => {
    await repository.add({ scope: 't1', channel: 'sms', recipient: '+8613900000001' });
    await repository.add({ scope: 't1', channel: '*', recipient: 'a@example.com' });
    await repository.add({ scope: '*', channel: 'sms', recipient: '+8613900000002' });
    await repository.add({ scope: '*', channel: '*', recipient: '+8613900000003' });
    const blacklist = cache();
    await blacklist.reload();
    expect(blacklist.inMemory).toBe(true);
    const cases: [string, 'sms' | 'email', string, boolean][] = [
      ['t1', 'sms', '+8613900000001', true],
      ['t2', 'sms', '+8613900000001', false],
      ['t1', 'email', 'a@example.com', true],
      ['t2', 'email', 'a@example.com', false],
      ['t2', 'sms', '+8613900000002', true],
      ['t2', 'email', '+8613900000002', false],
      ['t9', 'email', '+8613900000003', true],
      ['t1', 'sms', '+8613900000009', false],
    ];
    for (const [tenant, channel, recipient, expected] of cases) {
      expect(await blacklist.isBlacklisted(tenant, channel, recipient)).toBe(expected);
      // The same answer as the SQL query it replaces.
      expect(await repository.isBlacklisted(tenant, channel, recipient)).toBe(expected);
    }
  });

  it('a change through changed() is visible here at once and in other instances through the bus', async () => {
    const here = cache();
    const there = cache();
    await Promise.all([here.reload(), there.reload()]);
    await repository.add({ scope: 't1', channel: 'sms', recipient: '+8613900000001' });
    // Not announced yet: the copies still answer from the table as they loaded it.
    expect(await here.isBlacklisted('t1', 'sms', '+8613900000001')).toBe(false);
    await here.changed();
    expect(await here.isBlacklisted('t1', 'sms', '+8613900000001')).toBe(true);
    await expect.poll(() => there.isBlacklisted('t1', 'sms', '+8613900000001')).toBe(true);

    await repository.remove({ scope: 't1', channel: 'sms', recipient: '+8613900000001' });
    await here.changed();
    expect(await here.isBlacklisted('t1', 'sms', '+8613900000001')).toBe(false);
    await expect.poll(() => there.isBlacklisted('t1', 'sms', '+8613900000001')).toBe(false);
  });

  it('a change made past sluice is found by the fingerprint check', async () => {
    const blacklist = cache(1000, 20);
    await blacklist.reload();
    await repository.add({ scope: '*', channel: '*', recipient: '+8613900000005' });
    await expect.poll(() => blacklist.isBlacklisted('t1', 'sms', '+8613900000005'), { timeout: 2000 }).toBe(true);
  });

  it('concurrent reloads all see a change made before they were asked', async () => {
    const blacklist = cache();
    await blacklist.reload();
    const first = blacklist.reload();
    await repository.add({ scope: 't1', channel: 'sms', recipient: '+8613900000006' });
    const second = blacklist.reload();
    await Promise.all([first, second]);
    expect(await blacklist.isBlacklisted('t1', 'sms', '+8613900000006')).toBe(true);
  });

  it('a table larger than maxEntries stays in SQL and still answers', async () => {
    for (let i = 0; i < 5; i++) await repository.add({ scope: 't1', channel: 'sms', recipient: `+861390000001${i}` });
    const blacklist = cache(4);
    await blacklist.reload();
    expect(blacklist.inMemory).toBe(false);
    expect(await blacklist.isBlacklisted('t1', 'sms', '+8613900000013')).toBe(true);
    expect(await blacklist.isBlacklisted('t1', 'sms', '+8613900000099')).toBe(false);
    await repository.remove({ scope: 't1', channel: 'sms', recipient: '+8613900000010' });
    await blacklist.changed();
    expect(blacklist.inMemory).toBe(true);
  });

  it('a change is loaded once by the instance that made it (its own announcement is not a second reload), once by the others, and close waits for a load', async () => {
    const loads = { count: 0 };
    const all = repository.all.bind(repository);
    repository.all = ((...args: Parameters<typeof all>) => {
      loads.count++;
      return all(...args);
    }) as typeof repository.all;
    const writer = cache();
    const other = cache();
    await Promise.all([writer.reload(), other.reload()]);
    loads.count = 0;
    await repository.add({ scope: 't1', channel: 'sms', recipient: '+8613900000020' });
    await writer.changed();
    await other.close(); // waits for the reload the announcement started
    expect(await other.isBlacklisted('t1', 'sms', '+8613900000020')).toBe(true);
    // Before: the writer's own announcement reloaded it a second time, in the background, and a
    // CLI command closing the database under that load logged "driver has already been destroyed".
    expect(loads.count).toBe(2);
  });
});

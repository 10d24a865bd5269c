/**
 * The durable SQLite dialect: a commit (explicit, or an autocommit write) resolves only after the
 * WAL sync it triggered; reads and statements inside a transaction trigger none; commits waiting
 * together share one sync. The sync is injected to observe and delay it; the real one runs in the
 * last test against a file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrations/index.js';
import { TenantsRepository } from '../../src/storage/repositories/tenants.js';
import { walSync } from '../../src/storage/sqlite-durable.js';

/** A sync the test releases by hand, counting calls. */
function gatedSync() {
  let release: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = {
    calls: 0,
    sync: async () => {
      state.calls++;
      await gate;
    },
    open() {
      release();
    },
    close() {
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
    },
  };
  return state;
}

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('DurableSqliteDialect', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  async function open(sync: () => Promise<void>) {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-durable-'));
    database = await openDatabase(`sqlite:${join(dir, 'd.db')}`, { sqliteSync: sync });
    return database;
  }

  it('an autocommit write resolves only after its sync; a read needs none', async () => {
    const gate = gatedSync();
    gate.open();
    const db = await open(gate.sync);
    await migrateToLatest(db);
    const tenants = new TenantsRepository(db);
    gate.close();
    const before = gate.calls;
    const created = tenants.create({ name: 'durable' });
    expect(await settled(created)).toBe(false);
    expect(gate.calls).toBeGreaterThan(before);
    gate.open();
    const { tenant } = await created;

    const calls = gate.calls;
    expect(await tenants.get(tenant.id)).toMatchObject({ name: 'durable' });
    expect(gate.calls).toBe(calls);
  });

  it('a transaction syncs once, at its commit, and not after a rollback', async () => {
    const gate = gatedSync();
    gate.open();
    const db = await open(gate.sync);
    await migrateToLatest(db);
    const start = gate.calls;
    await db.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 5; i++) {
        await trx
          .insertInto('tenants')
          .values({ id: `t${i}`, name: `t${i}`, status: 'active', qps_limit: null, created_at: 0, updated_at: 0 })
          .execute();
      }
    });
    expect(gate.calls - start).toBe(1);
    await expect(
      db.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('tenants')
          .values({ id: 'x', name: 'x', status: 'active', qps_limit: null, created_at: 0, updated_at: 0 })
          .execute();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(gate.calls - start).toBe(1);
  });

  it('walSync shares one fdatasync among the commits waiting for it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-durable-'));
    database = await openDatabase(`sqlite:${join(dir, 'w.db')}`);
    await migrateToLatest(database);
    const sync = walSync(join(dir, 'w.db'));
    // Real fdatasync calls on the real WAL: ten callers at once need at most two (the running one, then one for the rest).
    const first = sync();
    const others = Array.from({ length: 9 }, () => sync());
    expect(others[0]).toBe(others[8]);
    await Promise.all([first, ...others]);
    await sync.close?.();
    // A database with no WAL file: the database file itself is synced.
    writeFileSync(join(dir, 'plain.db'), '');
    const plain = walSync(join(dir, 'plain.db'));
    await plain();
    await plain.close?.();
    await expect(walSync(join(dir, 'absent.db'))()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

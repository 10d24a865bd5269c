/**
 * The durable SQLite dialect: a commit (explicit, or an autocommit write) resolves only after the
 * WAL sync it triggered; reads and statements inside a transaction trigger none; commits waiting
 * together share one sync; a transaction that allows it resolves before its (started) sync; after
 * a failed sync no commit is confirmed. The sync is injected to observe and delay it; the real one
 * runs in the last test against a file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrations/index.js';
import { MessagesRepository } from '../../src/storage/repositories/messages.js';
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

const insert = (db: Database, id: string) => db.db.insertInto('tenants').values(tenantRow(id)).execute();

const tenantRow = (id: string) => ({ id, name: id, status: 'active' as const, qps_limit: null, created_at: 0, updated_at: 0 });

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
          .values(tenantRow(`t${i}`))
          .execute();
      }
    });
    expect(gate.calls - start).toBe(1);
    await expect(
      db.db.transaction().execute(async (trx) => {
        await trx.insertInto('tenants').values(tenantRow('x')).execute();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(gate.calls - start).toBe(1);
  });

  it('a relaxedTransaction resolves before its sync, which still starts', async () => {
    const gate = gatedSync();
    gate.open();
    const db = await open(gate.sync);
    await migrateToLatest(db);
    gate.close();
    const before = gate.calls;
    await db.relaxedTransaction((trx) => trx.insertInto('tenants').values(tenantRow('r')).execute());
    expect(gate.calls).toBe(before + 1);
    // The relaxation was for that transaction only: the next commit waits again.
    const next = db.db.transaction().execute((trx) => trx.insertInto('tenants').values(tenantRow('s')).execute());
    expect(await settled(next)).toBe(false);
    gate.open();
    await next;
  });

  it('after a failed sync every statement is refused, and readiness fails', async () => {
    let fail = false;
    const db = await open(async () => {
      if (fail) throw new Error('EIO: fdatasync failed');
    });
    await migrateToLatest(db);
    const insert = (id: string) => db.db.insertInto('tenants').values(tenantRow(id)).execute();
    fail = true;
    // A relaxed commit whose own sync fails may or may not hear of it (it does not wait)...
    await db.relaxedTransaction((trx) => trx.insertInto('tenants').values(tenantRow('a')).execute()).catch(() => undefined);
    // ...but from then on nothing goes through, even once fdatasync would succeed again: the pages
    // the failed one did not write may have been marked clean, so a new sync proves nothing.
    fail = false;
    await expect(insert('b')).rejects.toThrow('EIO');
    await expect(db.relaxedTransaction((trx) => trx.insertInto('tenants').values(tenantRow('c')).execute())).rejects.toThrow('EIO');
    // Reads too: a row committed but never synced must not be reported (an Idempotency-Key replay would).
    await expect(db.db.selectFrom('tenants').selectAll().execute()).rejects.toThrow('EIO');
    // Readiness says so: a load balancer should stop sending this instance accepts.
    await expect(db.ping()).rejects.toThrow(/fsync failed.*restart required: EIO/);
  });

  it('a commit whose sync ran after a failed one it queued behind is not confirmed', async () => {
    // walSync's sharing: a commit arriving during a running sync waits for the next one, which
    // starts when the running one ends. Linux reports a writeback error once per open file, so
    // that next fdatasync may succeed although the pages the failed one lost are gone.
    let calls = 0;
    let failFirst: (error: Error) => void = () => undefined;
    let first: Promise<void> | undefined;
    const db = await open(async () => {
      calls++;
      if (!first) return;
      if (calls === 1 + baseline) return first;
      await first.catch(() => undefined); // the next sync, after the running one, succeeds
    });
    await migrateToLatest(db);
    const baseline = calls;
    first = new Promise<void>((_, reject) => {
      failFirst = reject;
    });
    const a = insert(db, 'a'); // its sync is the running one
    expect(await settled(a)).toBe(false);
    const b = insert(db, 'b'); // written during it: its sync is the next one
    expect(await settled(b)).toBe(false);
    failFirst(new Error('EIO: writeback failed'));
    await expect(a).rejects.toThrow('EIO');
    await expect(b).rejects.toThrow('EIO');
  });

  it('the messages writer waits for the sync of an accept, not of a claim or an outcome', async () => {
    const gate = gatedSync();
    gate.open();
    const db = await open(gate.sync);
    await migrateToLatest(db);
    const { tenant } = await new TenantsRepository(db).create({ name: 'm' });
    const messages = new MessagesRepository(db);
    gate.close();
    const accepted = messages.insert({ tenantId: tenant.id, channel: 'sms', recipient: '+8613800000000', payload: { body: 'x' }, now: 1 });
    expect(await settled(accepted)).toBe(false);
    gate.open();
    const message = await accepted;

    gate.close();
    const claimed = await messages.claimDue({ channel: 'sms', partition: 0, partitions: 1, now: 2, leaseMs: 60_000, limit: 10 });
    expect(claimed.map((m) => m.id)).toEqual([message.id]);
    expect(await messages.markSent(message.id, { attempt: claimed[0]!.attempts, now: 3 })).toBe(true);
    expect((await messages.get(message.id))?.status).toBe('sent');
    gate.open();
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

/**
 * SQLite's `synchronous=FULL` guarantee, without blocking the event loop on the fsync.
 *
 * better-sqlite3 is synchronous: with `synchronous=FULL` every COMMIT fsyncs the WAL on the main
 * thread, and under load those fsyncs (about 1.2 ms each here) stall every request in the
 * process. So the connection runs `synchronous=NORMAL` (the WAL is written at commit, not synced)
 * and this dialect makes every commit wait for an `fdatasync` of the WAL file, run on libuv's
 * thread pool, before the caller hears of it. A commit the caller saw is therefore on disk, as
 * with FULL, while the event loop goes on serving other requests during the fsync; commits that
 * arrive during one fsync share the next one.
 *
 * What counts as a commit: COMMIT of a transaction, and any statement outside a transaction that
 * is not a SELECT (an autocommit write). Why the WAL alone suffices: in WAL mode a transaction is
 * durable once its frames (with the commit frame) are in the WAL on disk; checkpoints, which copy
 * the WAL into the database file, sync both files themselves in NORMAL mode. The WAL file keeps
 * its inode while any connection is open (SQLite deletes it only when the last one closes); were
 * it gone, its frames would have been checkpointed, so the database file is synced instead.
 *
 * A transaction may ask not to wait ({@link DurableSqliteDialect.commitMayPrecedeSync}): its sync
 * still starts at commit, and any later commit that waits covers it (the WAL is synced as a
 * prefix). For writes whose loss in an OS crash only repeats work, like a delivery claim.
 *
 * A failed sync stops the database: after a failed `fdatasync` the kernel may have marked the
 * unwritten pages clean, so a later sync could succeed without them. Every commit still waiting
 * then fails, and every later statement is refused, until the process restarts (PostgreSQL
 * PANICs for the same reason; recovery from the WAL on disk then decides what survived).
 */
import { type FileHandle, open } from 'node:fs/promises';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  RawNode,
  SelectQueryNode,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';

/** Makes what was written to the file durable; resolves when the data is on disk. `close` frees what it holds. */
export type SyncFile = (() => Promise<void>) & { close?(): Promise<void> };

async function datasync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * `fdatasync` of the WAL file (of the database file while there is no WAL), shared: a caller
 * arriving while one runs waits for the next one (the running one may have started before the
 * caller's commit was written), which then serves every caller that arrived meanwhile. The WAL
 * stays open between syncs (one thread-pool hop per sync, not three): it keeps its inode while
 * the database's connection is open.
 */
export function walSync(databasePath: string): SyncFile {
  let wal: Promise<FileHandle> | undefined;
  const run = async () => {
    wal ??= open(`${databasePath}-wal`, 'r');
    let handle: FileHandle;
    try {
      handle = await wal;
    } catch (error) {
      wal = undefined;
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await datasync(databasePath);
      return;
    }
    await handle.datasync();
  };
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const sync = (): Promise<void> => {
    if (!running) {
      running = run().finally(() => {
        running = undefined;
      });
      return running;
    }
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return sync();
      });
    return next;
  };
  return Object.assign(sync, {
    async close() {
      const handle = await wal?.catch(() => undefined);
      wal = undefined;
      await handle?.close();
    },
  });
}

function isRead(query: CompiledQuery): boolean {
  if (SelectQueryNode.is(query.query)) return true;
  return RawNode.is(query.query) && /^\s*select\b/i.test(query.sql);
}

/**
 * Kysely's SQLite dialect whose commits resolve only after `sync()` (see the module comment).
 * The connection must run `synchronous=NORMAL` (or OFF); `sync` supplies the durability.
 */
export class DurableSqliteDialect extends SqliteDialect {
  /** Set by {@link commitMayPrecedeSync} for the transaction in progress; reset at its release. */
  private relaxedCommit = false;
  /** The first failed sync, if any: from then on every statement fails with its error. */
  private failure: { error: unknown } | undefined;

  constructor(
    config: SqliteDialectConfig,
    private readonly sync: SyncFile,
  ) {
    super(config);
  }

  /**
   * Call synchronously at the start of a transaction's callback, while that transaction holds
   * the connection (`Database.relaxedTransaction` does): its commit resolves without waiting for
   * the sync, which still starts at once. A later waiting commit covers it.
   */
  commitMayPrecedeSync(): void {
    this.relaxedCommit = true;
  }

  /** The error of the first failed sync, or `undefined`: after one, every statement fails (readiness reports it). */
  get syncFailure(): unknown {
    return this.failure?.error;
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const dialect = this;
    const sync = (): Promise<void> =>
      dialect.failure
        ? Promise.reject(dialect.failure.error)
        : dialect.sync().catch((error: unknown) => {
            dialect.failure ??= { error };
            throw error;
          });
    // SQLite has one connection, lent to one user at a time (Kysely's driver holds a mutex).
    let inTransaction = false;
    let inner: DatabaseConnection | undefined;
    let outer: DatabaseConnection | undefined;
    /**
     * The sync a commit started. It is awaited in `releaseConnection`, after the connection is
     * lent again, so the next transaction is written while this one's fsync runs; the caller
     * still hears of its commit only after the sync (Kysely awaits the release before answering).
     */
    let unsynced: Promise<void> | undefined;
    const unwrap = (connection: DatabaseConnection) => (connection === outer && inner ? inner : connection);
    return {
      init: () => driver.init(),
      async acquireConnection() {
        // After a failed sync nothing more is written or read: a commit made now would be as
        // unconfirmable as the lost one, and a read could report a row that is not on disk.
        if (dialect.failure) throw dialect.failure.error;
        const connection = await driver.acquireConnection();
        if (connection !== inner) {
          inner = connection;
          outer = {
            async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
              const result = await connection.executeQuery<R>(query);
              if (!inTransaction && !isRead(query)) unsynced = sync();
              return result;
            },
            streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
          };
        }
        return outer as DatabaseConnection;
      },
      async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
        await driver.beginTransaction(unwrap(connection), settings);
        inTransaction = true;
      },
      async commitTransaction(connection: DatabaseConnection) {
        await driver.commitTransaction(unwrap(connection));
        inTransaction = false;
        unsynced = sync();
      },
      async rollbackTransaction(connection: DatabaseConnection) {
        inTransaction = false;
        await driver.rollbackTransaction(unwrap(connection));
      },
      savepoint: (connection, name, compile) => driver.savepoint!(unwrap(connection), name, compile),
      rollbackToSavepoint: (connection, name, compile) => driver.rollbackToSavepoint!(unwrap(connection), name, compile),
      releaseSavepoint: (connection, name, compile) => driver.releaseSavepoint!(unwrap(connection), name, compile),
      async releaseConnection(connection: DatabaseConnection) {
        const pending = unsynced;
        const wait = !dialect.relaxedCommit;
        unsynced = undefined;
        dialect.relaxedCommit = false;
        await driver.releaseConnection(unwrap(connection));
        // A failed fsync fails the caller: the commit may not be on disk, and retrying the fsync
        // would not make it so (the kernel may have dropped the dirty pages). A caller that did not
        // wait does not hear of its own sync's failure; every later statement fails with that error.
        if (wait) await pending;
        else pending?.catch(() => undefined);
        // Also after a sync that succeeded: it may have shared the file with one that failed just
        // before (walSync runs the next sync after the running one), and Linux reports a writeback
        // error once per open file, so the later fdatasync can succeed without the lost pages.
        if (dialect.failure) throw dialect.failure.error;
      },
      async destroy() {
        await driver.destroy();
        await dialect.sync.close?.();
      },
    };
  }
}

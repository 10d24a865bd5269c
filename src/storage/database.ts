/**
 * Opening the SQL database that is sluice's source of truth. One URL picks the dialect:
 *
 * | URL | dialect | driver |
 * | --- | --- | --- |
 * | `sqlite:data/sluice.db`, `sqlite:///abs/path.db`, `sqlite::memory:` | `sqlite` | better-sqlite3 (embedded default) |
 * | `postgres://user:pass@host:5432/db` (`postgresql://`) | `postgres` | pg |
 * | `mysql://user:pass@host:3306/db` (`mariadb://`) | `mysql` | mysql2 (MySQL 8, MariaDB 10.5+) |
 *
 * Every dialect returns BIGINT columns as JS numbers (epoch-ms timestamps, counts): pg gets a
 * per-pool int8 parser (no global side effect), mysql2 `supportBigNumbers` + `bigNumberStrings: false`.
 *
 * SQLite durability: `journal_mode=WAL`, and by default every commit is on disk before its caller
 * hears of it (`synchronous=FULL`'s promise: it survives an OS crash or power cut), except in a
 * `relaxedTransaction` (delivery claims and outcomes). The fsync that
 * costs runs off the event loop (`sqlite-durable.ts`), and the group commit writer
 * (`group-commit.ts`) shares one among the many inserts of a busy moment.
 * `sqliteSynchronous: 'normal'` drops the per-commit fsync: a process crash loses nothing (the WAL
 * is written at commit), an OS crash or power cut may lose the last commits.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, type SqliteDatabase, SqliteDialect, sql, type Transaction } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { type Dialect, dialectOfUrl, maskUrl, sqlitePathOfUrl, UnsupportedDatabaseUrlError } from '../core/urls.js';
import type { Tables } from './schema.js';
import { DurableSqliteDialect, type SyncFile, walSync } from './sqlite-durable.js';

export { type Dialect, dialectOfUrl, maskUrl, sqlitePathOfUrl, UnsupportedDatabaseUrlError } from '../core/urls.js';

/**
 * Kysely asks better-sqlite3 to prepare every query it runs, and preparing costs about as much as
 * running a small statement. sluice's SQL text repeats (parameters are bound), so prepared
 * statements are kept, the least recently added dropped past `max`. Safe because better-sqlite3
 * runs a statement to completion synchronously; nothing here iterates a statement lazily.
 */
function withStatementCache(file: BetterSqlite3.Database, max = 1000): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => file.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = file.prepare(text);
        if (statements.size >= max) statements.delete(statements.keys().next().value as string);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

/**
 * What a dialect can do, for the queries that differ by it (Kysely's
 * `DialectAdapter.supportsReturning` style): repositories and migrations read these flags, never
 * the dialect's name.
 */
export interface DialectCapabilities {
  /**
   * `UPDATE … RETURNING` hands back the rows it moved (SQLite ≥ 3.35, PostgreSQL). Without it
   * (MySQL; MariaDB before 11) the moved rows are read back by a token the UPDATE stamped.
   */
  readonly returning: boolean;
  /**
   * Write transactions run side by side (PostgreSQL, MySQL). SQLite has one writer at a time, so
   * more batches in flight only queue behind it.
   */
  readonly concurrentWriters: boolean;
  /**
   * An index is named within its table, so `DROP INDEX name ON table` (MySQL); SQLite and
   * PostgreSQL name indexes per schema and refuse the `ON` clause.
   */
  readonly indexNamedByTable: boolean;
  /**
   * `UPDATE … FROM` a list of values (SQLite ≥ 3.33, PostgreSQL) sets each row its own values in
   * one statement; MySQL joins the list instead (`UPDATE t JOIN (…) v ON …`).
   */
  readonly updateFrom: boolean;
}

/** Every dialect's {@link DialectCapabilities}: the one place a dialect's abilities are stated. */
export const DIALECT_CAPABILITIES: Readonly<Record<Dialect, DialectCapabilities>> = {
  sqlite: { returning: true, concurrentWriters: false, indexNamedByTable: false, updateFrom: true },
  postgres: { returning: true, concurrentWriters: true, indexNamedByTable: false, updateFrom: true },
  mysql: { returning: false, concurrentWriters: true, indexNamedByTable: true, updateFrom: false },
};

/** An open database: the Kysely instance, which dialect it speaks, and how to close it. */
export interface Database {
  /** Typed query builder over {@link Tables}. Repositories use it; so may migrations and tests. */
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /** What this dialect can do ({@link DIALECT_CAPABILITIES}); queries that differ by dialect read it. */
  readonly capabilities: DialectCapabilities;
  /** The URL with its password masked: safe to log. */
  readonly displayUrl: string;
  /**
   * `db.transaction().execute(work)`, whose commit may resolve before it is on disk. For writes
   * whose loss in an OS crash or power cut only repeats work (a delivery claim or outcome: the
   * message is sent again, which at-least-once allows). Only SQLite's off-loop sync makes a
   * difference (the sync still starts at commit, and the next commit that waits covers this
   * one); on PostgreSQL, MySQL and SQLite `normal` it is a plain transaction.
   */
  relaxedTransaction<T>(work: (trx: Transaction<Tables>) => Promise<T>): Promise<T>;
  /**
   * One round trip (`SELECT 1`): throws if the database is unreachable, or (SQLite) once a commit's
   * fsync has failed, after which every statement is refused until restart. For `/readyz`.
   */
  ping(): Promise<void>;
  /** Closes the pool / file. Idempotent. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Connections in the pool (PostgreSQL/MySQL). Default 10. SQLite always uses one connection. */
  poolSize?: number;
  /** SQLite durability. Default `'full'`: every commit synced to disk before it resolves (see the module comment). */
  sqliteSynchronous?: 'full' | 'normal';
  /** SQLite `'full'`: how the WAL is synced after a commit. Default: `fdatasync` on the thread pool. For tests. */
  sqliteSync?: SyncFile;
  /** SQLite: ms to wait on a lock held by another process (e.g. `sluice migrate`). Default 5000. */
  sqliteBusyTimeoutMs?: number;
  /**
   * SQLite: whether a missing file is created (default true: `migrate` and `serve`); false refuses
   * with {@link DatabaseMissingError}, so a command run from another folder does not start a new,
   * empty database there.
   */
  create?: boolean;
  /**
   * Errors of idle pooled connections (server restart, network cut). pg emits them on the pool
   * and an unhandled one would crash the process; queries in flight still fail normally. Default: ignored.
   */
  onIdleConnectionError?: (error: Error) => void;
}

const PG_INT8_OID = 20;

/** No database where one must already be: a SQLite file missing, or (`requireSchema`) a database without sluice's tables. */
export class DatabaseMissingError extends Error {
  override name = 'DatabaseMissingError';
}

/**
 * Makes `path`'s folder for a new SQLite file: the folder itself, not a chain of them, so a typo
 * in SLUICE_DB_URL (`sqlite:/srv/slucie/data/x.db`) ends with an error naming the folder that is
 * missing rather than with a database in a new tree of folders.
 */
function makeSqliteFolder(path: string): void {
  const folder = dirname(resolve(path));
  if (existsSync(folder)) return;
  if (!existsSync(dirname(folder)))
    throw new DatabaseMissingError(
      `cannot create the database ${resolve(path)}: the folder ${dirname(folder)} does not exist (sluice creates the database's own folder only)`,
    );
  mkdirSync(folder);
}

/**
 * Opens (and for SQLite creates, with its folder, unless `create: false`) the database at `url`.
 * Does not migrate: call `migrateToLatest(database)` (the `migrate` CLI and `serve` do).
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const dialect = dialectOfUrl(url);
  const poolSize = options.poolSize ?? 10;
  let db: Kysely<Tables>;
  let durableDialect: DurableSqliteDialect | undefined;
  switch (dialect) {
    case 'sqlite': {
      const path = sqlitePathOfUrl(url);
      if (path !== ':memory:') {
        if (options.create === false && !existsSync(path))
          throw new DatabaseMissingError(
            `no database at ${resolve(path)} (SLUICE_DB_URL=${url}${isAbsolute(path) ? '' : `, relative to ${process.cwd()}`}): ` +
              'run the command where the database is, set SLUICE_DB_URL, or create it with `sluice migrate`',
          );
        makeSqliteFolder(path);
        // Recipients and bodies are personal data: a new database is the owner's alone (SQLite
        // gives its -wal and -shm files the database file's mode). An existing file keeps its mode.
        closeSync(openSync(path, 'a', 0o600));
      }
      const file = new BetterSqlite3(path);
      let durable = false;
      try {
        const wal = path !== ':memory:' && file.pragma('journal_mode = WAL', { simple: true }) === 'wal';
        // For 'full' in WAL mode the dialect below syncs each commit off the event loop, so the
        // connection itself need not; without WAL, SQLite has to sync its journal itself.
        durable = wal && options.sqliteSynchronous !== 'normal';
        file.pragma(`synchronous = ${durable || options.sqliteSynchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
        file.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.sqliteBusyTimeoutMs ?? 5000))}`);
        file.pragma('foreign_keys = ON');
        // SQLite's default puts temporary b-trees in files; an `IN (?, ?)` list is one, so every
        // blacklist lookup would open and remove a temp file.
        file.pragma('temp_store = MEMORY');
      } catch (error) {
        file.close();
        throw error;
      }
      const config = { database: withStatementCache(file) };
      durableDialect = durable ? new DurableSqliteDialect(config, options.sqliteSync ?? walSync(path)) : undefined;
      db = new Kysely<Tables>({ dialect: durableDialect ?? new SqliteDialect(config) });
      break;
    }
    case 'postgres': {
      const pool = new pg.Pool({
        connectionString: url,
        max: poolSize,
        // A server that accepts no connection (down, or frozen while every pooled one is busy)
        // fails the caller after this, with a 503, instead of queueing it for good.
        connectionTimeoutMillis: 5000,
        // Per pool, not pg.types.setTypeParser: other code in the process keeps pg's defaults.
        types: {
          getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
            oid === PG_INT8_OID && format !== 'binary'
              ? (value: string) => Number(value)
              : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
        },
      });
      pool.on('error', (error) => options.onIdleConnectionError?.(error));
      // A client checked out between two statements has no pool listener: a server shutdown would crash us.
      pool.on('connect', (client) => client.on('error', (error) => options.onIdleConnectionError?.(error)));
      db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
      break;
    }
    case 'mysql': {
      const pool = createPool({
        uri: url.replace(/^mariadb:/i, 'mysql:'),
        connectionLimit: poolSize,
        supportBigNumbers: true,
        bigNumberStrings: false,
        charset: 'utf8mb4',
      });
      db = new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) });
      break;
    }
    default:
      throw new UnsupportedDatabaseUrlError(url);
  }

  let closed: Promise<void> | undefined;
  return {
    db,
    dialect,
    capabilities: DIALECT_CAPABILITIES[dialect],
    displayUrl: maskUrl(url),
    relaxedTransaction: (work) =>
      db.transaction().execute((trx) => {
        // Synchronously, first thing in the callback: the connection is this transaction's now.
        durableDialect?.commitMayPrecedeSync();
        return work(trx);
      }),
    async ping() {
      const failure = durableDialect?.syncFailure;
      if (failure !== undefined)
        throw new Error(
          `an fsync failed, the database refuses every statement; restart required: ${(failure as Error).message ?? failure}`,
        );
      await sql`select 1`.execute(db);
    },
    close() {
      closed ??= db.destroy();
      return closed;
    },
  };
}

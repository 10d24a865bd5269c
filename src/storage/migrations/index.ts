/**
 * Versioned schema migrations. The list is static (imported modules, no directory scan), so it
 * works the same from `src/` under tsx and from the compiled `dist/`. Names sort in order of
 * application; a new migration is a new `NNNN-name.ts` module added to {@link migrationsFor},
 * never an edit of an applied one. Bookkeeping lives in `sluice_migration` / `sluice_migration_lock`;
 * Kysely's lock makes concurrent `migrate` runs (several instances starting at once) safe.
 */
import { type Migration, type MigrationResult, Migrator } from 'kysely';
import type { Database, Dialect } from '../database.js';
import { initialMigration } from './0001-initial.js';
import { providerNameUniqueMigration } from './0002-provider-name-unique.js';
import { tenantStatusIndexMigration } from './0003-tenant-status-index.js';
import { blacklistCanonicalKeysMigration } from './0004-blacklist-canonical-keys.js';
import { riskRuleSetsMigration } from './0005-risk-rule-sets.js';
import { webhooksMigration } from './0006-webhooks.js';
import { templatesPriorityQuietHoursMigration } from './0007-templates-priority-quiet-hours.js';
import { messagesTenantRecipientIndexMigration } from './0008-messages-tenant-recipient-index.js';
import { messagesTenantIndexMigration } from './0009-messages-tenant-index.js';
import { brokerHandOffMigration } from './0010-broker-hand-off.js';
import { smsFraudMigration } from './0011-sms-fraud.js';
import { messageFraudColumnsMigration } from './0012-message-fraud-columns.js';
import { limiterSnapshotsMigration } from './0013-limiter-snapshots.js';
import { tenantSendWeightMigration } from './0018-tenant-send-weight.js';
import { consentMigration } from './0020-consent.js';
import { messageTraceContextMigration } from './0021-message-trace-context.js';
import { configChangesMigration } from './0022-config-changes.js';

/** What data migrations need of the settings. */
export interface MigrationOptions {
  /** `SLUICE_DEFAULT_REGION`: how national phone numbers in stored blacklist entries are read (0004); without it only `+country` numbers are. */
  defaultRegion?: string;
}

/** Every migration, by name, in application order. */
export function migrationsFor(dialect: Dialect, options: MigrationOptions = {}): Record<string, Migration> {
  return {
    '0001-initial': initialMigration(dialect),
    '0002-provider-name-unique': providerNameUniqueMigration(dialect),
    '0003-tenant-status-index': tenantStatusIndexMigration(dialect),
    '0004-blacklist-canonical-keys': blacklistCanonicalKeysMigration(options),
    '0005-risk-rule-sets': riskRuleSetsMigration(dialect),
    '0006-webhooks': webhooksMigration(dialect),
    '0007-templates-priority-quiet-hours': templatesPriorityQuietHoursMigration(dialect),
    '0008-messages-tenant-recipient-index': messagesTenantRecipientIndexMigration(dialect),
    '0009-messages-tenant-index': messagesTenantIndexMigration(dialect),
    '0010-broker-hand-off': brokerHandOffMigration(dialect),
    '0011-sms-fraud': smsFraudMigration(dialect),
    '0012-message-fraud-columns': messageFraudColumnsMigration(dialect),
    '0013-limiter-snapshots': limiterSnapshotsMigration(dialect),
    '0018-tenant-send-weight': tenantSendWeightMigration(dialect),
    '0020-consent': consentMigration(dialect),
    '0021-message-trace-context': messageTraceContextMigration(dialect),
    '0022-config-changes': configChangesMigration(dialect),
  };
}

function migratorFor(database: Database, options: MigrationOptions = {}): Migrator {
  return new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrationsFor(database.dialect, options) },
    migrationTableName: 'sluice_migration',
    migrationLockTableName: 'sluice_migration_lock',
  });
}

/** Thrown when a migration fails; `results` says which ran, failed or were not attempted. */
export class MigrationError extends Error {
  constructor(
    readonly results: readonly MigrationResult[],
    cause: unknown,
  ) {
    super(`Database migration failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'MigrationError';
  }
}

/**
 * Applies every pending migration; a no-op when up to date (safe to call on every start).
 * @returns the names applied by this call, in order.
 */
export async function migrateToLatest(database: Database, options: MigrationOptions = {}): Promise<string[]> {
  const { error, results = [] } = await migratorFor(database, options).migrateToLatest();
  if (error !== undefined) throw new MigrationError(results, error);
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Names of the migrations not yet applied (empty = schema current). `/readyz` reports not-ready
 * while this is non-empty. Reads only; creates nothing.
 */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const migrations = await migratorFor(database).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * Whether sluice's schema is there: at least one migration applied. A command other than
 * `migrate` and `serve` refuses a database without it rather than create the tables (a wrong
 * SLUICE_DB_URL would otherwise look like an empty sluice). Reads only; creates nothing.
 */
export async function hasSchema(database: Database): Promise<boolean> {
  const migrations = await migratorFor(database).getMigrations();
  return migrations.some((m) => m.executedAt !== undefined);
}

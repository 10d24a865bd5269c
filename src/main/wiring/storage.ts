/**
 * The storage wing: the database (migrated), the repositories over it, and the secret key that
 * seals provider and webhook secrets and keys the hashes in store keys.
 */
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import { resolveSecretKey } from '../../infra/secret-key.js';
import type { Clock } from '../../limiter/index.js';
import type { Settings } from '../../settings/settings.js';
import { type Database, DatabaseMissingError, openDatabase } from '../../storage/database.js';
import { hasSchema, migrateToLatest } from '../../storage/migrations/index.js';
import { BacklogRepository } from '../../storage/repositories/backlog.js';
import { BlacklistRepository } from '../../storage/repositories/blacklist.js';
import { BusEventsRepository } from '../../storage/repositories/bus-events.js';
import { FraudRepository } from '../../storage/repositories/fraud.js';
import { MessagesRepository } from '../../storage/repositories/messages.js';
import { ProvidersRepository } from '../../storage/repositories/providers.js';
import { QuietHoursRepository } from '../../storage/repositories/quiet-hours.js';
import { ReceiptsRepository } from '../../storage/repositories/receipts.js';
import { RiskRulesRepository } from '../../storage/repositories/risk-rules.js';
import { RulesRepository } from '../../storage/repositories/rules.js';
import { SmsSpendRepository } from '../../storage/repositories/sms-spend.js';
import { SuppressionsRepository } from '../../storage/repositories/suppressions.js';
import { TemplatesRepository } from '../../storage/repositories/templates.js';
import { TenantsRepository } from '../../storage/repositories/tenants.js';
import { WebhookEventsRepository } from '../../storage/repositories/webhook-events.js';
import { WebhooksRepository } from '../../storage/repositories/webhooks.js';
import { SecretBox } from '../../storage/secret-box.js';

export interface Repositories {
  tenants: TenantsRepository;
  rules: RulesRepository;
  riskRules: RiskRulesRepository;
  blacklist: BlacklistRepository;
  providers: ProvidersRepository;
  messages: MessagesRepository;
  templates: TemplatesRepository;
  quietHours: QuietHoursRepository;
  webhooks: WebhooksRepository;
  webhookEvents: WebhookEventsRepository;
  receipts: ReceiptsRepository;
  /** The status events bus's outbox, written while the broker is on. */
  busEvents: BusEventsRepository;
  fraud: FraudRepository;
  smsSpend: SmsSpendRepository;
  /** What waits to be sent, per tenant (admin reads, the backlog gauge). */
  backlog: BacklogRepository;
  /** Suppressions and the consent record (docs/compliance.md). */
  suppressions: SuppressionsRepository;
}

export interface StorageWing {
  database: Database;
  repositories: Repositories;
  /** Keys the hashes of recipients and other tenant data in store keys (derived from, not equal to, the master key). */
  keySecret: Buffer;
  /** Drains the group commits, then closes the database. */
  close(): Promise<void>;
}

export interface StorageOptions {
  clock: Clock;
  logger: Logger;
  /** Apply pending migrations. */
  migrate: boolean;
  /**
   * The database must exist and hold sluice's schema (CLI commands): else {@link DatabaseMissingError}
   * naming it, before anything is created (the SQLite file, the secret key). Default false: `serve`
   * and `migrate` create them.
   */
  requireSchema?: boolean;
  /** The broker is on, so every status change also writes its bus event (`backend/broker.ts` decides). */
  busEvents: boolean;
}

export async function openStorage(settings: Settings, options: StorageOptions): Promise<StorageWing> {
  const { clock, logger } = options;
  const database = await openDatabase(settings.dbUrl, {
    sqliteSynchronous: settings.sqliteSynchronous as 'full' | 'normal',
    create: !options.requireSchema,
  });
  let secretKey: Buffer;
  try {
    if (options.requireSchema && !(await hasSchema(database)))
      throw new DatabaseMissingError(
        `no sluice tables in ${database.displayUrl}: create them with \`sluice migrate\` (or set SLUICE_DB_URL)`,
      );
    // Every process of a deployment must seal and open with the same key: a new one is said aloud.
    secretKey = resolveSecretKey(settings, (path) =>
      logger.warn(
        { path },
        'created a new secret key, which seals provider credentials: keep it, and give every sluice process of this deployment the same key (this file or SLUICE_SECRET_KEY)',
      ),
    );
    if (options.migrate) {
      const applied = await migrateToLatest(database, { defaultRegion: settings.defaultRegion });
      if (applied.length) logger.info({ applied, db: database.displayUrl }, 'migrations applied');
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  const secretBox = new SecretBox(secretKey);
  const outbox = { bus: options.busEvents };
  const repositories: Repositories = {
    tenants: new TenantsRepository(database, { clock }),
    rules: new RulesRepository(database, { clock }),
    riskRules: new RiskRulesRepository(database, { clock }),
    blacklist: new BlacklistRepository(database, { clock }),
    providers: new ProvidersRepository(database, { clock, secretBox }),
    messages: new MessagesRepository(database, { outbox }),
    templates: new TemplatesRepository(database, { clock }),
    quietHours: new QuietHoursRepository(database, { clock }),
    webhooks: new WebhooksRepository(database, { clock, secretBox }),
    webhookEvents: new WebhookEventsRepository(database),
    receipts: new ReceiptsRepository(database, outbox),
    busEvents: new BusEventsRepository(database),
    fraud: new FraudRepository(database, { clock }),
    smsSpend: new SmsSpendRepository(database),
    backlog: new BacklogRepository(database),
    suppressions: new SuppressionsRepository(database),
  };
  return {
    database,
    repositories,
    keySecret: createHmac('sha256', secretKey).update('sluice redis key hashing').digest(),
    async close() {
      await repositories.messages.drain();
      await repositories.smsSpend.drain();
      await database.close();
    },
  };
}

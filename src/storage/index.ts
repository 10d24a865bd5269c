/**
 * The storage module: SQL as sluice's source of truth (DESIGN.md §5).
 *
 * ```ts
 * const database = await openDatabase(settings.dbUrl);          // sqlite:, postgres://, mysql://
 * await migrateToLatest(database);
 * const storage = createRepositories(database, { secretBox: SecretBox.fromString(settings.secretKey) });
 * const { tenant, apiKey } = await storage.tenants.create({ name: 'shop' });
 * const message = await storage.messages.insert({ tenantId: tenant.id, channel: 'sms', recipient: '+8613800000000', payload: { body: 'hi' }, now: Date.now() });
 * ...
 * await storage.close();                                         // drains group commit, closes the pool
 * ```
 */
import type { Clock } from '../limiter/clock.js';
import type { Database } from './database.js';
import type { GroupCommitOptions } from './group-commit.js';
import { BacklogRepository } from './repositories/backlog.js';
import { BlacklistRepository } from './repositories/blacklist.js';
import { BusEventsRepository } from './repositories/bus-events.js';
import { MessagesRepository } from './repositories/messages.js';
import { ProvidersRepository } from './repositories/providers.js';
import { QuietHoursRepository } from './repositories/quiet-hours.js';
import { ReceiptsRepository } from './repositories/receipts.js';
import { RiskRulesRepository } from './repositories/risk-rules.js';
import { RulesRepository } from './repositories/rules.js';
import { TemplatesRepository } from './repositories/templates.js';
import { TenantsRepository } from './repositories/tenants.js';
import { WebhookEventsRepository } from './repositories/webhook-events.js';
import { WebhooksRepository } from './repositories/webhooks.js';
import type { SecretBox } from './secret-box.js';

export * from './database.js';
export * from './errors.js';
export * from './group-commit.js';
export * from './ids.js';
export { MigrationError, type MigrationOptions, migrateToLatest, migrationsFor, pendingMigrations } from './migrations/index.js';
export * from './repositories/backlog.js';
export * from './repositories/blacklist.js';
export * from './repositories/bus-events.js';
export * from './repositories/config-changes.js';
export * from './repositories/limiter-snapshots.js';
export * from './repositories/messages.js';
export * from './repositories/providers.js';
export * from './repositories/quiet-hours.js';
export * from './repositories/receipts.js';
export * from './repositories/risk-rules.js';
export * from './repositories/rules.js';
export * from './repositories/templates.js';
export * from './repositories/tenants.js';
export * from './repositories/webhook-events.js';
export * from './repositories/webhooks.js';
export * from './schema.js';
export * from './secret-box.js';

/** Every repository over one database. */
export interface Repositories {
  readonly database: Database;
  readonly tenants: TenantsRepository;
  readonly rules: RulesRepository;
  readonly riskRules: RiskRulesRepository;
  readonly blacklist: BlacklistRepository;
  readonly providers: ProvidersRepository;
  readonly messages: MessagesRepository;
  readonly templates: TemplatesRepository;
  readonly quietHours: QuietHoursRepository;
  readonly webhooks: WebhooksRepository;
  readonly webhookEvents: WebhookEventsRepository;
  readonly receipts: ReceiptsRepository;
  /** The status events bus's outbox (broker mode). */
  readonly busEvents: BusEventsRepository;
  /** What waits to be sent, per tenant (admin reads and the backlog gauge). */
  readonly backlog: BacklogRepository;
  /** Drains pending message inserts, then closes the database. */
  close(): Promise<void>;
}

export interface RepositoryOptions {
  /** Seals provider secrets; without it, providers with secrets cannot be stored or read. */
  secretBox?: SecretBox;
  /** Time source for configuration rows' created/updated times (messages take `now` per call). */
  clock?: Clock;
  groupCommit?: GroupCommitOptions;
  /** With the broker on: every status change also writes its `bus_events` row. */
  busEvents?: boolean;
}

export function createRepositories(database: Database, options: RepositoryOptions = {}): Repositories {
  const clock = options.clock === undefined ? {} : { clock: options.clock };
  const outbox = { bus: options.busEvents ?? false };
  const messages = new MessagesRepository(database, { groupCommit: options.groupCommit, outbox });
  return {
    database,
    tenants: new TenantsRepository(database, clock),
    rules: new RulesRepository(database, clock),
    riskRules: new RiskRulesRepository(database, clock),
    blacklist: new BlacklistRepository(database, clock),
    providers: new ProvidersRepository(database, {
      ...clock,
      ...(options.secretBox === undefined ? {} : { secretBox: options.secretBox }),
    }),
    messages,
    templates: new TemplatesRepository(database, clock),
    quietHours: new QuietHoursRepository(database, clock),
    webhooks: new WebhooksRepository(database, {
      ...clock,
      ...(options.secretBox === undefined ? {} : { secretBox: options.secretBox }),
    }),
    webhookEvents: new WebhookEventsRepository(database),
    receipts: new ReceiptsRepository(database, outbox),
    busEvents: new BusEventsRepository(database),
    backlog: new BacklogRepository(database),
    async close() {
      await messages.drain();
      await database.close();
    },
  };
}

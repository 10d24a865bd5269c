/**
 * Tenants' webhook endpoints. The signing secret (`whsec_` + 32 random bytes in base64) is made here, shown
 * once by {@link WebhooksRepository.create} / {@link WebhooksRepository.rotateSecret}, sealed with
 * the {@link SecretBox} (bound to the webhook id) before it reaches SQL, and opened only by
 * {@link WebhooksRepository.signingSecrets} for the event dispatcher. Every tenant-facing call
 * takes the tenant id and touches only that tenant's rows.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { newId, shardOf } from '../ids.js';
import type { EventType, WebhooksTable } from '../schema.js';
import type { SecretBox } from '../secret-box.js';

export interface Webhook {
  id: string;
  tenantId: string;
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  /** Until when the secret before the last rotation still signs (epoch ms), or null. */
  previousSecretUntil: number | null;
  shard: number;
  createdAt: number;
  updatedAt: number;
}

export interface NewWebhook {
  tenantId: string;
  url: string;
  events: readonly EventType[];
  description?: string | null;
}

export type WebhookChanges = Partial<Pick<NewWebhook, 'url' | 'events' | 'description'> & { enabled: boolean }>;

/** The secrets an event is signed with: the current one, and the previous one during its grace period. */
export interface SigningSecrets {
  current: string;
  previous?: string;
}

function toWebhook(row: WebhooksTable): Webhook {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    description: row.description,
    enabled: Number(row.enabled) === 1,
    previousSecretUntil: row.previous_until === null ? null : Number(row.previous_until),
    shard: Number(row.shard),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Standard base64 after the prefix: Standard Webhooks libraries decode it strictly. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export class WebhooksRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    private readonly options: { clock?: Clock; secretBox?: SecretBox } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  private get db() {
    return this.database.db;
  }

  private box(): SecretBox {
    if (!this.options.secretBox) throw new Error('webhooks need a SecretBox (SLUICE_SECRET_KEY) to seal their signing secrets');
    return this.options.secretBox;
  }

  /** Stores a new endpoint. @returns it and its signing secret, in clear this once. */
  async create(input: NewWebhook): Promise<{ webhook: Webhook; secret: string }> {
    const now = this.clock.now();
    const id = `wh_${newId(now)}`;
    const secret = newSecret();
    const row: WebhooksTable = {
      id,
      tenant_id: input.tenantId,
      url: input.url,
      events: JSON.stringify([...new Set(input.events)]),
      description: input.description ?? null,
      secret: this.box().seal(secret, id),
      previous_secret: null,
      previous_until: null,
      shard: shardOf(id),
      enabled: 1,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('webhooks').values(row).execute();
    return { webhook: toWebhook(row), secret };
  }

  async get(tenantId: string, id: string): Promise<Webhook | undefined> {
    const row = await this.db.selectFrom('webhooks').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
    return row && toWebhook(row);
  }

  async list(tenantId: string): Promise<Webhook[]> {
    const rows = await this.db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
    return rows.map(toWebhook);
  }

  /** The enabled endpoints whose `shard % partitions == partition`: one event dispatcher's. */
  async listForPartition(partition: number, partitions: number): Promise<Webhook[]> {
    const rows = await this.db.selectFrom('webhooks').selectAll().where('enabled', '=', 1).orderBy('id').execute();
    return rows.map(toWebhook).filter((webhook) => webhook.shard % partitions === partition);
  }

  /** @returns the changed endpoint, or undefined when the tenant has no such webhook. */
  async update(tenantId: string, id: string, changes: WebhookChanges): Promise<Webhook | undefined> {
    const set: Partial<WebhooksTable> = { updated_at: this.clock.now() };
    if (changes.url !== undefined) set.url = changes.url;
    if (changes.events !== undefined) set.events = JSON.stringify([...new Set(changes.events)]);
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.enabled !== undefined) set.enabled = changes.enabled ? 1 : 0;
    const result = await this.db.updateTable('webhooks').set(set).where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (result.numUpdatedRows === 0n) return undefined;
    return this.get(tenantId, id);
  }

  /** Removes the endpoint and its events (pending ones are not sent). @returns whether it existed. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('webhooks').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
      if (result.numDeletedRows === 0n) return false;
      await trx.deleteFrom('webhook_events').where('webhook_id', '=', id).execute();
      return true;
    });
  }

  /**
   * A new signing secret; the current one keeps signing too (a second `v1=`) for `graceMs`, so a
   * receiver can switch without refusing events. @returns the new secret in clear, or undefined
   * when the tenant has no such webhook.
   */
  async rotateSecret(tenantId: string, id: string, graceMs: number): Promise<{ webhook: Webhook; secret: string } | undefined> {
    const row = await this.db.selectFrom('webhooks').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (!row) return undefined;
    const now = this.clock.now();
    const secret = newSecret();
    await this.db
      .updateTable('webhooks')
      .set({ secret: this.box().seal(secret, id), previous_secret: row.secret, previous_until: now + graceMs, updated_at: now })
      .where('id', '=', id)
      .where('secret', '=', row.secret)
      .execute();
    const webhook = await this.get(tenantId, id);
    return webhook && { webhook, secret };
  }

  /** The secrets to sign `id`'s events with at `now`. For the event dispatcher only. */
  async signingSecrets(id: string, now: number): Promise<SigningSecrets | undefined> {
    const row = await this.db
      .selectFrom('webhooks')
      .select(['secret', 'previous_secret', 'previous_until'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    const box = this.box();
    const current = box.open(row.secret, id);
    const previous =
      row.previous_secret !== null && row.previous_until !== null && Number(row.previous_until) > now
        ? box.open(row.previous_secret, id)
        : undefined;
    return previous === undefined ? { current } : { current, previous };
  }
}

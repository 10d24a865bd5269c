/**
 * The outbox on every backend: event rows written in the transaction of their status change (and
 * only when it commits), one per subscribed webhook; the order guard, retries, give-up, replay,
 * retention; webhook secrets sealed, rotated, scoped to their tenant.
 */
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import {
  createRepositories,
  type Database,
  DuplicateIdempotencyKeyError,
  migrateToLatest,
  type NewMessageRow,
  openDatabase,
  type Repositories,
  SecretBox,
} from '../../src/storage/index.js';
import { markDeliveredQuery } from '../../src/storage/repositories/webhook-events.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const uniqueName = () => `sluice_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
const T0 = 1_700_000_000_000;
const ALL = ['message.accepted', 'message.sent', 'message.failed', 'message.canceled'] as const;

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `webhook outbox on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let database: Database;
    let repos: Repositories;
    const clock = new ManualClock(T0);
    const secretBox = new SecretBox(Buffer.alloc(32, 7));

    beforeAll(async () => {
      created = await backend.create();
      database = await openDatabase(created.url);
      await migrateToLatest(database);
      repos = createRepositories(database, { secretBox, clock });
    });

    afterAll(async () => {
      await repos?.close();
      await created?.drop();
    });

    const newTenant = async () => (await repos.tenants.create({ name: uniqueName() })).tenant;
    const message = (tenantId: string, extra: Partial<NewMessageRow> = {}): NewMessageRow => ({
      tenantId,
      channel: 'sms',
      recipient: '+8613812340000',
      payload: { body: 'hi' },
      now: T0,
      ...extra,
    });
    const eventsOf = (messageId: string) =>
      database.db
        .selectFrom('webhook_events')
        .selectAll()
        .where('message_id', '=', messageId)
        .orderBy('step')
        .orderBy('webhook_id')
        .execute();
    const claim = async (id: string) => {
      const [claimed] = await repos.messages.claimMany([id], { now: T0, leaseMs: 30_000 });
      return claimed!;
    };

    describe('writing events', () => {
      it('writes one row per subscribed webhook for each status change, with the masked recipient and a shared event id', async () => {
        const tenant = await newTenant();
        const other = await newTenant();
        const all = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        const finished = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://b.example/hook', events: ['message.sent'] });
        await repos.webhooks.create({ tenantId: other.id, url: 'https://c.example/hook', events: ALL });

        const m = await repos.messages.insert(message(tenant.id));
        const claimed = await claim(m.id);
        expect(
          await repos.messages.markSent(m.id, { attempt: claimed.attempts, now: T0 + 5, providerId: 'p1', providerMessageId: 'biz-1' }),
        ).toBe(true);

        const rows = await eventsOf(m.id);
        expect(rows.map((row) => [row.webhook_id, row.type])).toEqual(
          [
            [all.webhook.id, 'message.accepted'],
            [all.webhook.id, 'message.sent'],
            [finished.webhook.id, 'message.sent'],
          ].sort((a, b) => (a[1] === b[1] ? (a[0]! < b[0]! ? -1 : 1) : a[1] === 'message.accepted' ? -1 : 1)),
        );
        const sent = rows.filter((row) => row.type === 'message.sent');
        expect(sent[0]!.event_id).toBe(sent[1]!.event_id);
        const body = JSON.parse(sent[0]!.body);
        expect(body).toEqual({
          id: sent[0]!.event_id,
          type: 'message.sent',
          createdAt: new Date(T0 + 5).toISOString(),
          data: {
            messageId: m.id,
            channel: 'sms',
            recipient: '+86138****0000',
            status: 'sent',
            attempt: 1,
            provider: 'p1',
            providerMessageId: 'biz-1',
          },
        });
        expect(rows.every((row) => row.tenant_id === tenant.id && !row.body.includes('13812340000'))).toBe(true);

        // The admin timeline's read: the message's events on the tenant's webhooks, by step, and nothing for another tenant.
        const hooks = (await repos.webhooks.list(tenant.id)).map((hook) => hook.id);
        const listed = await repos.webhookEvents.listForMessage(tenant.id, hooks, m.id);
        expect(listed.map((event) => [event.webhookId, event.type, event.eventId])).toEqual(
          rows.map((row) => [row.webhook_id, row.type, row.event_id]),
        );
        const theirs = (await repos.webhooks.list(other.id)).map((hook) => hook.id);
        expect(await repos.webhookEvents.listForMessage(other.id, theirs, m.id)).toEqual([]);
        expect(await repos.webhookEvents.listForMessage(other.id, hooks, m.id)).toEqual([]);
        expect(await repos.webhookEvents.listForMessage(tenant.id, [], m.id)).toEqual([]);
      });

      it('writes failed and canceled events, and none for a retry or a tenant without webhooks', async () => {
        const tenant = await newTenant();
        const webhook = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        const failing = await repos.messages.insert(message(tenant.id));
        let claimed = await claim(failing.id);
        expect(await repos.messages.markRetry(failing.id, { attempt: claimed.attempts, now: T0, dueAt: T0, error: 'busy' })).toBe(true);
        claimed = await claim(failing.id);
        expect(await repos.messages.markFailed(failing.id, { attempt: claimed.attempts, now: T0 + 9, error: 'refused' })).toBe(true);
        expect((await eventsOf(failing.id)).map((row) => row.type)).toEqual(['message.accepted', 'message.failed']);
        const failed = JSON.parse((await eventsOf(failing.id))[1]!.body);
        expect(failed.data).toMatchObject({ status: 'failed', attempt: 2, error: 'refused' });

        const later = await repos.messages.insert(message(tenant.id, { dueAt: T0 + 60_000 }));
        expect(await repos.messages.cancel(tenant.id, later.id, T0 + 1)).toBe('canceled');
        expect(await repos.messages.cancel(tenant.id, later.id, T0 + 2)).toBe('canceled');
        expect((await eventsOf(later.id)).map((row) => row.type)).toEqual(['message.accepted', 'message.canceled']);
        expect((await eventsOf(later.id))[0]!.webhook_id).toBe(webhook.webhook.id);

        const quiet = await newTenant();
        const unheard = await repos.messages.insert(message(quiet.id));
        expect(await eventsOf(unheard.id)).toEqual([]);
      });

      it('a disabled webhook gets nothing; a message failed by an exhausted lease gets its event', async () => {
        const tenant = await newTenant();
        const webhook = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ['message.failed'] });
        const off = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://b.example/hook', events: ALL });
        await repos.webhooks.update(tenant.id, off.webhook.id, { enabled: false });
        const m = await repos.messages.insert(message(tenant.id, { maxAttempts: 1 }));
        await claim(m.id);
        // The lease expires; the re-claim is past max_attempts and fails the message instead.
        expect(await repos.messages.claimMany([m.id], { now: T0 + 60_000, leaseMs: 30_000 })).toEqual([]);
        const rows = await eventsOf(m.id);
        expect(rows.map((row) => [row.webhook_id, row.type])).toEqual([[webhook.webhook.id, 'message.failed']]);
      });

      it('an accept whose insert fails writes no event; the others of its batch do', async () => {
        const tenant = await newTenant();
        await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        await repos.messages.insert(message(tenant.id, { idempotencyKey: 'k1' }));
        const results = await Promise.allSettled([
          repos.messages.insert(message(tenant.id, { idempotencyKey: 'k1' })),
          repos.messages.insert(message(tenant.id, { idempotencyKey: 'k2' })),
        ]);
        expect(results[0]!.status).toBe('rejected');
        expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateIdempotencyKeyError);
        const ok = (results[1] as PromiseFulfilledResult<{ id: string }>).value;
        expect((await eventsOf(ok.id)).map((row) => row.type)).toEqual(['message.accepted']);
        const count = await database.db
          .selectFrom('webhook_events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('tenant_id', '=', tenant.id)
          .executeTakeFirst();
        expect(Number(count?.n)).toBe(2);
      });
    });

    describe('reading events', () => {
      it('holds a later event of a message until the earlier one is delivered or given up', async () => {
        const tenant = await newTenant();
        const { webhook } = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        const m = await repos.messages.insert(message(tenant.id));
        const claimed = await claim(m.id);
        await repos.messages.markSent(m.id, { attempt: claimed.attempts, now: T0 + 1 });
        const first = await repos.webhookEvents.due(webhook.id, { now: T0 + 10, limit: 10 });
        expect(first.map((event) => event.type)).toEqual(['message.accepted']);
        // In flight (excluded) it still holds the next one.
        expect(await repos.webhookEvents.due(webhook.id, { now: T0 + 10, limit: 10, exclude: [first[0]!.eventId] })).toEqual([]);
        // A failed post: retried later, still holding.
        expect(
          await repos.webhookEvents.markFailedAttempt(webhook.id, first[0]!.eventId, {
            now: T0 + 10,
            nextAt: T0 + 1000,
            error: 'HTTP 500',
          }),
        ).toBe('pending');
        expect(await repos.webhookEvents.due(webhook.id, { now: T0 + 10, limit: 10 })).toEqual([]);
        expect(await repos.webhookEvents.nextDue(webhook.id)).toBe(T0 + 1);
        const retried = await repos.webhookEvents.due(webhook.id, { now: T0 + 1000, limit: 10 });
        expect(retried.map((event) => [event.type, event.attempts])).toEqual([['message.accepted', 1]]);
        await repos.webhookEvents.markDelivered(webhook.id, first[0]!.eventId, T0 + 1001);
        const next = await repos.webhookEvents.due(webhook.id, { now: T0 + 1001, limit: 10 });
        expect(next.map((event) => event.type)).toEqual(['message.sent']);
        expect(await repos.webhookEvents.countPending([webhook.id])).toBe(1);
      });

      it('gives an event up past its retry window, lists it as failed, replays it for its tenant only', async () => {
        const tenant = await newTenant();
        const other = await newTenant();
        const { webhook } = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        const m = await repos.messages.insert(message(tenant.id));
        const [event] = await repos.webhookEvents.due(webhook.id, { now: T0, limit: 10 });
        const day = 24 * 3_600_000;
        expect(
          await repos.webhookEvents.markFailedAttempt(webhook.id, event!.eventId, {
            now: T0 + day,
            nextAt: T0 + day + 1,
            error: 'HTTP 503',
          }),
        ).toBe('failed');
        expect(await repos.webhookEvents.due(webhook.id, { now: T0 + 2 * day, limit: 10 })).toEqual([]);
        const failed = await repos.webhookEvents.list(tenant.id, webhook.id, { limit: 10 });
        expect(failed.map((e) => [e.eventId, e.status, e.lastError, e.messageId])).toEqual([[event!.eventId, 'failed', 'HTTP 503', m.id]]);
        expect(await repos.webhookEvents.list(other.id, webhook.id, { limit: 10 })).toEqual([]);
        expect(await repos.webhookEvents.replay(other.id, webhook.id, event!.eventId, { now: T0 + 2 * day, retryMs: day })).toBeUndefined();
        const replayed = await repos.webhookEvents.replay(tenant.id, webhook.id, event!.eventId, { now: T0 + 2 * day, retryMs: day });
        expect(replayed).toMatchObject({ status: 'pending', nextAt: T0 + 2 * day, giveUpAt: T0 + 3 * day });
        expect((await repos.webhookEvents.due(webhook.id, { now: T0 + 2 * day, limit: 10 })).map((e) => e.eventId)).toEqual([
          event!.eventId,
        ]);
      });

      it('retention deletes delivered and failed events last changed before the cut, never pending ones', async () => {
        const tenant = await newTenant();
        const { webhook } = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        const delivered = await repos.messages.insert(message(tenant.id));
        const pending = await repos.messages.insert(message(tenant.id));
        const [event] = (await repos.webhookEvents.due(webhook.id, { now: T0, limit: 10 })).filter((e) => e.messageId === delivered.id);
        await repos.webhookEvents.markDelivered(webhook.id, event!.eventId, T0);
        expect(await repos.webhookEvents.purgeFinished({ before: T0 + 1, limit: 1000 })).toBeGreaterThanOrEqual(1);
        expect(await eventsOf(delivered.id)).toEqual([]);
        expect((await eventsOf(pending.id)).map((row) => row.status)).toEqual(['pending']);
      });

      it('marks a batch of 2xx answers delivered, each by its primary key (never a walk of the pending events)', async () => {
        const tenant = await newTenant();
        const { webhook } = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        for (let i = 0; i < 5; i++) await repos.messages.insert(message(tenant.id));
        const due = await repos.webhookEvents.due(webhook.id, { now: T0, limit: 10 });
        await repos.webhookEvents.markDeliveredMany(
          due.slice(0, 3).map((event) => ({ webhookId: webhook.id, eventId: event.eventId })),
          T0,
        );
        const statuses = (await repos.webhookEvents.due(webhook.id, { now: T0, limit: 10 })).map((event) => event.eventId);
        expect(statuses).toEqual(due.slice(3).map((event) => event.eventId));
        if (database.dialect === 'sqlite') {
          // SQLite has no statistics here: an IN list of event ids made it walk the due index.
          const compiled = markDeliveredQuery(database.db, { webhookId: webhook.id, eventId: due[0]!.eventId }, T0).compile();
          const plan = await database.db.executeQuery(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]));
          expect(JSON.stringify(plan.rows)).toMatch(/USING INDEX sqlite_autoindex_webhook_events_1 \(webhook_id=\? AND event_id=\?\)/);
        }
      });
    });

    describe('webhooks', () => {
      it('seals the secret, signs with both during a rotation grace, keeps tenants apart, deletes events with the webhook', async () => {
        const tenant = await newTenant();
        const other = await newTenant();
        const { webhook, secret } = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ALL });
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        const stored = await database.db.selectFrom('webhooks').select('secret').where('id', '=', webhook.id).executeTakeFirstOrThrow();
        expect(stored.secret).not.toContain(secret.slice(6));
        expect(await repos.webhooks.signingSecrets(webhook.id, T0)).toEqual({ current: secret });

        expect(await repos.webhooks.get(other.id, webhook.id)).toBeUndefined();
        expect(await repos.webhooks.update(other.id, webhook.id, { enabled: false })).toBeUndefined();
        expect(await repos.webhooks.rotateSecret(other.id, webhook.id, 1000)).toBeUndefined();
        expect(await repos.webhooks.delete(other.id, webhook.id)).toBe(false);

        const rotated = await repos.webhooks.rotateSecret(tenant.id, webhook.id, 60_000);
        expect(rotated!.secret).not.toBe(secret);
        expect(await repos.webhooks.signingSecrets(webhook.id, clock.now() + 1)).toEqual({ current: rotated!.secret, previous: secret });
        expect(await repos.webhooks.signingSecrets(webhook.id, clock.now() + 60_001)).toEqual({ current: rotated!.secret });

        const m = await repos.messages.insert(message(tenant.id));
        expect(await eventsOf(m.id)).toHaveLength(1);
        expect(await repos.webhooks.delete(tenant.id, webhook.id)).toBe(true);
        expect(await eventsOf(m.id)).toEqual([]);
        expect(await repos.webhooks.list(tenant.id)).toEqual([]);
      });
    });

    describe('receipts', () => {
      const sentBy = async (tenantId: string, providerId: string, providerMessageId: string) => {
        const m = await repos.messages.insert(message(tenantId));
        const claimed = await claim(m.id);
        expect(await repos.messages.markSent(m.id, { attempt: claimed.attempts, now: T0 + 5, providerId, providerMessageId })).toBe(true);
        return m;
      };

      it('moves a sent message to delivered or undelivered, keeps the vendor code, writes the event; a duplicate changes nothing', async () => {
        const tenant = await newTenant();
        await repos.webhooks.create({
          tenantId: tenant.id,
          url: 'https://a.example/hook',
          events: ['message.delivered', 'message.undelivered'],
        });
        const good = await sentBy(tenant.id, 'prv_a', 'biz-good');
        const bad = await sentBy(tenant.id, 'prv_a', 'biz-bad');
        expect(
          await repos.receipts.apply(
            'prv_a',
            [
              { providerMessageId: 'biz-good', delivered: true, code: 'DELIVERED', at: T0 + 100 },
              { providerMessageId: 'biz-bad', delivered: false, code: 'MK:0001', at: T0 + 200 },
            ],
            T0 + 300,
          ),
        ).toEqual(['applied', 'applied']);
        expect(await repos.messages.get(good.id)).toMatchObject({
          status: 'delivered',
          receipt: { status: 'delivered', code: 'DELIVERED', at: T0 + 100 },
        });
        expect(await repos.messages.get(bad.id)).toMatchObject({
          status: 'undelivered',
          receipt: { status: 'undelivered', code: 'MK:0001' },
        });
        const [event] = await eventsOf(bad.id);
        expect(JSON.parse(event!.body).data).toMatchObject({
          status: 'undelivered',
          receipt: { status: 'undelivered', code: 'MK:0001', at: new Date(T0 + 200).toISOString() },
        });
        expect(
          await repos.receipts.apply('prv_a', [{ providerMessageId: 'biz-good', delivered: false, code: 'LATE', at: T0 }], T0 + 400),
        ).toEqual(['duplicate']);
        expect((await repos.messages.get(good.id))?.status).toBe('delivered');
        expect(await eventsOf(good.id)).toHaveLength(1);
      });

      it('a receipt before the settle waits and is applied by it; another provider cannot reach the message', async () => {
        const tenant = await newTenant();
        await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ['message.sent', 'message.delivered'] });
        expect(
          await repos.receipts.apply('prv_b', [{ providerMessageId: 'biz-early', delivered: true, code: 'DELIVRD', at: T0 + 1 }], T0 + 2),
        ).toEqual(['pending']);
        expect(
          await repos.receipts.apply('prv_b', [{ providerMessageId: 'biz-early', delivered: true, code: 'DELIVRD', at: T0 + 1 }], T0 + 3),
        ).toEqual(['duplicate']);
        // Another provider's receipt with the same vendor id never moves this provider's message.
        expect(
          await repos.receipts.apply('prv_other', [{ providerMessageId: 'biz-late', delivered: false, code: 'X', at: T0 }], T0),
        ).toEqual(['pending']);
        const early = await sentBy(tenant.id, 'prv_b', 'biz-early');
        expect(await repos.messages.get(early.id)).toMatchObject({ status: 'delivered', receipt: { code: 'DELIVRD' } });
        expect((await eventsOf(early.id)).map((row) => row.type)).toEqual(['message.sent', 'message.delivered']);
        const late = await sentBy(tenant.id, 'prv_b', 'biz-late');
        expect((await repos.messages.get(late.id))?.status).toBe('sent');
        // Kept while younger than the cut-off; purged in batches after.
        expect(await repos.receipts.purgeFinished({ before: T0, limit: 10 })).toBe(0);
        expect(await repos.receipts.purgeFinished({ before: T0 + 10, limit: 1 })).toBe(1);
        expect(await repos.receipts.purgeFinished({ before: T0 + 10, limit: 10 })).toBeGreaterThanOrEqual(0);
        expect(await repos.receipts.purgeFinished({ before: T0 + 10, limit: 10 })).toBe(0);
      });

      it('issues a token per provider, stored hashed; a new one replaces it', async () => {
        const token = await repos.receipts.issueToken('prv_t', T0);
        expect(await repos.receipts.checkToken('prv_t', token)).toBe(true);
        expect(await repos.receipts.checkToken('prv_t', `${token}x`)).toBe(false);
        expect(await repos.receipts.checkToken('prv_u', token)).toBe(false);
        const stored = await database.db
          .selectFrom('receipt_tokens')
          .select('token_hash')
          .where('provider_id', '=', 'prv_t')
          .executeTakeFirstOrThrow();
        expect(stored.token_hash).not.toContain(token);
        const next = await repos.receipts.issueToken('prv_t', T0);
        expect(await repos.receipts.checkToken('prv_t', token)).toBe(false);
        expect(await repos.receipts.checkToken('prv_t', next)).toBe(true);
      });
    });
  });
}

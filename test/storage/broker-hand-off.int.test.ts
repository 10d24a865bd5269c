/**
 * The broker hand-off's storage on every backend (0010): marking due messages handed off (once,
 * guarded), the sweep's bound, un-marking a failed publish, the embedded due query and the index
 * listing of broker mode, retries that stay in the broker or go back to the due index; and the
 * bus outbox written with every status change while the broker is on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import {
  createRepositories,
  type Database,
  migrateToLatest,
  type NewMessageRow,
  openDatabase,
  type Repositories,
  SecretBox,
  shardOf,
} from '../../src/storage/index.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const uniqueName = () => `sluice_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `broker hand-off storage on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let database: Database;
    let repos: Repositories;
    let plain: Repositories;
    const clock = new ManualClock(T0);

    beforeAll(async () => {
      created = await backend.create();
      database = await openDatabase(created.url);
      await migrateToLatest(database);
      repos = createRepositories(database, { secretBox: new SecretBox(Buffer.alloc(32, 7)), clock, busEvents: true });
      // The same database without the broker: no bus rows.
      plain = createRepositories(database, { clock });
    });

    afterAll(async () => {
      await plain?.messages.drain();
      await repos?.close();
      await created?.drop();
    });

    // A channel per test: the embedded due query reads a whole channel's partition.
    const newTenant = async () => (await repos.tenants.create({ name: uniqueName() })).tenant;
    const message = (tenantId: string, extra: Partial<NewMessageRow> = {}): NewMessageRow => ({
      tenantId,
      channel: 'sms',
      recipient: '+8613800000000',
      payload: { body: 'hi' },
      now: T0,
      ...extra,
    });
    const handedOffAt = async (id: string) =>
      (await database.db.selectFrom('messages').select('handed_off_at').where('id', '=', id).executeTakeFirstOrThrow()).handed_off_at;
    const clearChannel = (channel: 'email' | 'webhook') => database.db.deleteFrom('messages').where('channel', '=', channel).execute();

    describe('handOff (ids from the due index)', () => {
      it('marks due pending messages once and returns what their jobs carry; not due, finished, suspended ones are skipped', async () => {
        const tenant = await newTenant();
        const suspended = await newTenant();
        const due = await repos.messages.insert(message(tenant.id));
        const bulk = await repos.messages.insert(message(tenant.id, { priority: 'bulk' }));
        const later = await repos.messages.insert(message(tenant.id, { dueAt: T0 + 60_000 }));
        const canceled = await repos.messages.insert(message(tenant.id));
        expect(await repos.messages.cancel(tenant.id, canceled.id, T0)).toBe('canceled');
        const held = await repos.messages.insert(message(suspended.id));
        await repos.tenants.update(suspended.id, { status: 'suspended' });

        const ids = [later.id, bulk.id, due.id, canceled.id, held.id];
        const marked = await repos.messages.handOff(ids, { now: T0 + 5, republishBefore: T0 + 5 - HOUR });
        expect(marked).toEqual([
          { id: due.id, tenantId: tenant.id, channel: 'sms', shard: shardOf(due.id), attempts: 0, dueAt: T0, priority: 'transactional' },
          { id: bulk.id, tenantId: tenant.id, channel: 'sms', shard: shardOf(bulk.id), attempts: 0, dueAt: T0, priority: 'bulk' },
        ]);
        expect(await handedOffAt(due.id)).toBe(T0 + 5);
        expect(await handedOffAt(later.id)).toBeNull();
        // Again (a stale index entry, a second publisher): nothing, until the sweep's bound passes.
        expect(await repos.messages.handOff(ids, { now: T0 + 10, republishBefore: T0 + 10 - HOUR })).toEqual([]);
        const swept = await repos.messages.handOff([due.id], { now: T0 + HOUR + 6, republishBefore: T0 + 6 });
        expect(swept.map((row) => row.id)).toEqual([due.id]);
        expect(await handedOffAt(due.id)).toBe(T0 + HOUR + 6);
      });

      it('takes a sending message back only once its lease expired and its hand-off is older than the bound', async () => {
        const tenant = await newTenant();
        const m = await repos.messages.insert(message(tenant.id));
        await repos.messages.handOff([m.id], { now: T0, republishBefore: T0 - HOUR });
        const [claimed] = await repos.messages.claimMany([m.id], { now: T0 + 1, leaseMs: 1000 });
        expect(claimed?.attempts).toBe(1);
        // Lease live: never.
        expect(await repos.messages.handOff([m.id], { now: T0 + 500, republishBefore: T0 + 500 })).toEqual([]);
        // Lease expired, but handed off after the bound: the broker redelivers its job itself.
        expect(await repos.messages.handOff([m.id], { now: T0 + 2000, republishBefore: T0 - 1 })).toEqual([]);
        // Lease expired, hand-off older than the bound (or than the broker's store): published again, attempt 1.
        const again = await repos.messages.handOff([m.id], { now: T0 + 2000, republishBefore: T0 + 1 });
        expect(again.map((row) => [row.id, row.attempts])).toEqual([[m.id, 1]]);
      });

      it('returnHandOffs un-marks only what that hand-off still marks', async () => {
        const tenant = await newTenant();
        const a = await repos.messages.insert(message(tenant.id));
        const b = await repos.messages.insert(message(tenant.id));
        await repos.messages.handOff([a.id], { now: T0 + 1, republishBefore: T0 - HOUR });
        await repos.messages.handOff([b.id], { now: T0 + 2, republishBefore: T0 - HOUR });
        expect(await repos.messages.returnHandOffs([a.id, b.id], T0 + 1)).toBe(1);
        expect(await handedOffAt(a.id)).toBeNull();
        expect(await handedOffAt(b.id)).toBe(T0 + 2);
        expect((await repos.messages.handOff([a.id, b.id], { now: T0 + 3, republishBefore: T0 - HOUR })).map((row) => row.id)).toEqual([
          a.id,
        ]);
      });
    });

    describe('handOffDue, nextHandOffAt, listHandOffIds (the due query and the index rebuild)', () => {
      it('the due query takes what was never handed off; the sweep also what was handed off before its bound', async () => {
        await clearChannel('email');
        const tenant = await newTenant();
        const email = (extra: Partial<NewMessageRow> = {}) => repos.messages.insert(message(tenant.id, { channel: 'email', ...extra }));
        const first = await email();
        const second = await email({ now: T0 + 1 });
        const scheduled = await email({ dueAt: T0 + 30_000 });
        const selector = { channel: 'email' as const, partition: 0, partitions: 1 };

        const taken = await repos.messages.handOffDue({
          ...selector,
          now: T0 + 10,
          republishBefore: T0 + 10 - HOUR,
          limit: 10,
          sweep: false,
        });
        expect(taken.map((row) => row.id)).toEqual([first.id, second.id]);
        expect(await repos.messages.handOffDue({ ...selector, now: T0 + 20, republishBefore: T0 + 20, limit: 10, sweep: false })).toEqual(
          [],
        );
        // The next due time ignores what the broker holds.
        expect(await repos.messages.nextHandOffAt({ ...selector, until: T0 + HOUR })).toBe(T0 + 30_000);
        // The sweep takes both back once their hand-off is older than its bound.
        const swept = await repos.messages.handOffDue({ ...selector, now: T0 + 20, republishBefore: T0 + 11, limit: 10, sweep: true });
        expect(swept.map((row) => row.id).sort()).toEqual([first.id, second.id].sort());
        // The scheduled one when due.
        const due = await repos.messages.handOffDue({ ...selector, now: T0 + 30_000, republishBefore: T0, limit: 10, sweep: false });
        expect(due.map((row) => row.id)).toEqual([scheduled.id]);
      });

      it('the index listing holds what is not handed off, the sweep rows, and sending rows by their lease end', async () => {
        await clearChannel('webhook');
        const tenant = await newTenant();
        const hook = (extra: Partial<NewMessageRow> = {}) =>
          repos.messages.insert(message(tenant.id, { channel: 'webhook', recipient: 'https://h.example/x', ...extra }));
        const fresh = await hook({ dueAt: T0 + 5000 });
        const recent = await hook();
        const old = await hook();
        const sending = await hook();
        await repos.messages.handOff([old.id, sending.id], { now: T0, republishBefore: T0 - HOUR });
        await repos.messages.handOff([recent.id], { now: T0 + HOUR, republishBefore: T0 });
        await repos.messages.claimMany([sending.id], { now: T0 + HOUR, leaseMs: 1000 });
        const listed = await repos.messages.listHandOffIds({
          channel: 'webhook',
          partition: 0,
          partitions: 1,
          now: T0 + HOUR + 1,
          republishBefore: T0 + 1,
          limit: 100,
        });
        expect(new Map(listed.map((entry) => [entry.id, entry.dueAt]))).toEqual(
          new Map([
            [fresh.id, T0 + 5000],
            [old.id, T0],
            [sending.id, T0 + HOUR + 1000],
          ]),
        );
      });
    });

    describe('retries and hand-backs', () => {
      it('markRetry says where the retry waits: in the broker (marked) or in the due index (not)', async () => {
        const tenant = await newTenant();
        const a = await repos.messages.insert(message(tenant.id));
        const b = await repos.messages.insert(message(tenant.id));
        const c = await repos.messages.insert(message(tenant.id));
        await repos.messages.handOff([a.id, b.id, c.id], { now: T0, republishBefore: T0 - HOUR });
        const claimed = await repos.messages.claimMany([a.id, b.id, c.id], { now: T0 + 1, leaseMs: 30_000 });
        expect(claimed).toHaveLength(3);
        // Settled in one batch (one statement where the dialect returns rows), each with its own value.
        const [kept, indexed, plainRetry] = await Promise.all([
          repos.messages.markRetry(a.id, { attempt: 1, now: T0 + 2, dueAt: T0 + 1000, error: 'x', handedOffAt: T0 + 2 }),
          repos.messages.markRetry(b.id, { attempt: 1, now: T0 + 2, dueAt: T0 + HOUR, error: 'x', handedOffAt: null }),
          repos.messages.markRetry(c.id, { attempt: 1, now: T0 + 2, dueAt: T0 + 1000, error: 'x' }),
        ]);
        expect([kept, indexed, plainRetry]).toEqual([true, true, true]);
        expect([await handedOffAt(a.id), await handedOffAt(b.id), await handedOffAt(c.id)]).toEqual([T0 + 2, null, T0]);
        expect((await repos.messages.get(a.id))?.handedOffAt).toBe(T0 + 2);
      });

      it('handBack un-marks a pending message only', async () => {
        const tenant = await newTenant();
        const pending = await repos.messages.insert(message(tenant.id));
        const sending = await repos.messages.insert(message(tenant.id));
        await repos.messages.handOff([pending.id, sending.id], { now: T0, republishBefore: T0 - HOUR });
        await repos.messages.claimMany([sending.id], { now: T0 + 1, leaseMs: 30_000 });
        expect(await repos.messages.handBack(pending.id)).toBe(true);
        expect(await repos.messages.handBack(sending.id)).toBe(false);
        expect([await handedOffAt(pending.id), await handedOffAt(sending.id)]).toEqual([null, T0]);
      });
    });

    describe('the bus outbox', () => {
      const busRows = (messageId: string) =>
        database.db.selectFrom('bus_events').selectAll().where('message_id', '=', messageId).orderBy('event_id').execute();

      it('writes a row per status change, the webhook body and event id, in the change transaction; none without the broker', async () => {
        const tenant = await newTenant();
        const { webhook } = await repos.webhooks.create({ tenantId: tenant.id, url: 'https://a.example/hook', events: ['message.sent'] });
        const m = await repos.messages.insert(message(tenant.id));
        const [claimed] = await repos.messages.claimMany([m.id], { now: T0 + 1, leaseMs: 30_000 });
        await repos.messages.markSent(m.id, { attempt: claimed!.attempts, now: T0 + 2, providerId: 'p1', providerMessageId: 'v-1' });
        const rows = await busRows(m.id);
        expect(rows.map((row) => [row.type, row.tenant_id, Number(row.shard), Number(row.created_at)])).toEqual([
          ['message.accepted', tenant.id, shardOf(m.id), T0],
          ['message.sent', tenant.id, shardOf(m.id), T0 + 2],
        ]);
        expect(JSON.parse(rows[1]!.body)).toMatchObject({
          id: rows[1]!.event_id,
          type: 'message.sent',
          data: { messageId: m.id, status: 'sent' },
        });
        // The webhook's row of the same change: the same event, byte for byte.
        const hooked = await database.db.selectFrom('webhook_events').selectAll().where('webhook_id', '=', webhook.id).execute();
        expect(hooked.map((row) => [row.event_id, row.body])).toEqual([[rows[1]!.event_id, rows[1]!.body]]);

        const canceled = await repos.messages.insert(message(tenant.id, { dueAt: T0 + HOUR }));
        await repos.messages.cancel(tenant.id, canceled.id, T0 + 3);
        expect((await busRows(canceled.id)).map((row) => row.type)).toEqual(['message.accepted', 'message.canceled']);

        const unseen = await plain.messages.insert(message(tenant.id));
        expect(await busRows(unseen.id)).toEqual([]);
      });

      it('reads a partition oldest first and deletes what was published', async () => {
        await database.db.deleteFrom('bus_events').execute();
        const tenant = await newTenant();
        const inserted = [];
        for (let i = 0; i < 6; i++) inserted.push(await repos.messages.insert(message(tenant.id, { now: T0 + i })));
        const all = await repos.busEvents.pending({ partition: 0, partitions: 1, limit: 100 });
        expect(all.map((event) => event.messageId)).toEqual(inserted.map((m) => m.id));
        const ofPartition = (p: number) => repos.busEvents.pending({ partition: p, partitions: 2, limit: 100 });
        const [p0, p1] = [await ofPartition(0), await ofPartition(1)];
        expect(p0.length + p1.length).toBe(6);
        for (const event of p0) expect(shardOf(event.messageId) % 2).toBe(0);
        expect(await repos.busEvents.remove(p0.map((event) => event.eventId))).toBe(p0.length);
        expect(await repos.busEvents.count()).toBe(p1.length);
      });
    });
  });
}

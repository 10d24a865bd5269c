/**
 * A vendor's push of delivery receipts on every backend (SQLite always; PostgreSQL and
 * MySQL/MariaDB when configured): a mixed push over three chunks, with duplicates inside it and
 * against what is stored, gets each receipt's outcome as if applied one by one, in a few
 * statements a chunk (it took four a receipt); pushing it again changes nothing.
 */
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import type { Receipt } from '../../src/providers/receipt.js';
import { createRepositories, type Database, migrateToLatest, openDatabase, type Repositories, SecretBox } from '../../src/storage/index.js';
import { RECEIPT_CHUNK, type ReceiptOutcome, ReceiptsRepository } from '../../src/storage/repositories/receipts.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const T0 = 1_700_000_000_000;

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `delivery receipts on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let database: Database;
    let repos: Repositories;

    beforeAll(async () => {
      created = await backend.create();
      database = await openDatabase(created.url);
      await migrateToLatest(database);
      repos = createRepositories(database, { secretBox: new SecretBox(Buffer.alloc(32, 7)), clock: new ManualClock(T0) });
    });

    afterAll(async () => {
      await repos?.close();
      await created?.drop();
    });

    const sentBy = async (tenantId: string, providerId: string, providerMessageId: string) => {
      const m = await repos.messages.insert({ tenantId, channel: 'sms', recipient: '+8613812340000', payload: { body: 'hi' }, now: T0 });
      const [claimed] = await repos.messages.claimMany([m.id], { now: T0, leaseMs: 30_000 });
      expect(await repos.messages.markSent(m.id, { attempt: claimed!.attempts, now: T0 + 5, providerId, providerMessageId })).toBe(true);
      return m.id;
    };

    /** The repository on a Kysely that counts the statements it runs. */
    const counted = () => {
      const count = { statements: 0 };
      const plugin: KyselyPlugin = {
        transformQuery: (args) => {
          count.statements++;
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      return { count, receipts: new ReceiptsRepository({ ...database, db: database.db.withPlugin(plugin) }) };
    };

    it('a mixed push over three chunks: each outcome as one by one, a few statements a chunk, idempotent', async () => {
      const tenant = (await repos.tenants.create({ name: `receipts-${Math.random()}` })).tenant;
      await repos.webhooks.create({
        tenantId: tenant.id,
        url: 'https://a.example/hook',
        events: ['message.delivered', 'message.undelivered'],
      });
      const sent = await Promise.all(['s0', 's1', 's2', 's3'].map((id) => sentBy(tenant.id, 'prv_mix', id)));
      const done = await sentBy(tenant.id, 'prv_mix', 'd0');
      const failed = await sentBy(tenant.id, 'prv_mix', 'f0');
      await database.db.updateTable('messages').set({ status: 'failed' }).where('id', '=', failed).execute();
      const others = await sentBy(tenant.id, 'prv_other', 'x0');
      const receipt = (providerMessageId: string, delivered = true, code = 'DELIVRD'): Receipt => ({
        providerMessageId,
        delivered,
        code,
        at: T0 + 100,
      });
      expect(await repos.receipts.apply('prv_mix', [receipt('d0'), receipt('w0', false, 'EARLY')], T0 + 50)).toEqual([
        'applied',
        'pending',
      ]);

      const push: [Receipt, ReceiptOutcome][] = [];
      const unknown = (i: number) => push.push([receipt(`u${i}`, i % 2 === 0, `C${i}`), 'pending']);
      for (let i = 0; i < 1_100; i++) unknown(i);
      // Spread over the chunks (0–499, 500–999, 1000–): moves, duplicates of moves, of stored and of waiting receipts.
      push.splice(
        3,
        0,
        [receipt('s0', false, 'UNDELIV'), 'applied'],
        [receipt('s1'), 'applied'],
        [receipt('s1', false, 'AGAIN'), 'duplicate'],
      );
      push.splice(10, 0, [receipt('d0', false), 'duplicate'], [receipt('w0'), 'duplicate'], [receipt('u2', false, 'TWICE'), 'duplicate']);
      push.splice(20, 0, [receipt('f0'), 'pending'], [receipt('x0'), 'pending'], [receipt('f0', false), 'duplicate']);
      push.splice(600, 0, [receipt('s2', true, 'LATER'), 'applied'], [receipt('u5', false, 'NEXT-CHUNK'), 'duplicate']);
      push.splice(1_050, 0, [receipt('s0'), 'duplicate'], [receipt('s3', false, 'LAST'), 'applied'], [receipt('s2'), 'duplicate']);
      expect(push.length).toBeGreaterThan(2 * RECEIPT_CHUNK);

      const { count, receipts } = counted();
      const outcomes = await receipts.apply(
        'prv_mix',
        push.map(([r]) => r),
        T0 + 200,
      );
      expect(outcomes).toEqual(push.map(([, outcome]) => outcome));
      // Four a receipt before; now a handful a chunk, events included.
      expect(count.statements).toBeLessThanOrEqual(3 * 8);

      const view = async (id: string) => {
        const m = await repos.messages.get(id);
        return { status: m?.status, code: m?.receipt?.code };
      };
      expect(await Promise.all(sent.map(view))).toEqual([
        { status: 'undelivered', code: 'UNDELIV' },
        { status: 'delivered', code: 'DELIVRD' },
        { status: 'delivered', code: 'LATER' },
        { status: 'undelivered', code: 'LAST' },
      ]);
      expect(await view(done)).toEqual({ status: 'delivered', code: 'DELIVRD' });
      expect((await view(failed)).status).toBe('failed');
      expect((await view(others)).status).toBe('sent');
      const waiting = await database.db
        .selectFrom('pending_receipts')
        .select(['provider_message_id', 'delivered', 'code', 'received_at'])
        .where('provider_id', '=', 'prv_mix')
        .execute();
      expect(waiting).toHaveLength(1_100 + 3);
      const byId = new Map(waiting.map((row) => [row.provider_message_id, { ...row, delivered: Number(row.delivered) }]));
      // The first receipt of an id is the one that waits.
      expect(byId.get('u2')).toMatchObject({ delivered: 1, code: 'C2', received_at: T0 + 200 });
      expect(byId.get('u5')).toMatchObject({ delivered: 0, code: 'C5' });
      expect(byId.get('w0')).toMatchObject({ delivered: 0, code: 'EARLY', received_at: T0 + 50 });
      expect(byId.get('f0')).toMatchObject({ delivered: 1 });
      const events = async () =>
        database.db
          .selectFrom('webhook_events')
          .select(['message_id', 'type'])
          .where('message_id', 'in', [...sent, done])
          .execute();
      const before = await events();
      expect(before.map((row) => `${row.message_id} ${row.type}`).sort()).toEqual(
        [
          `${sent[0]} message.undelivered`,
          `${sent[1]} message.delivered`,
          `${sent[2]} message.delivered`,
          `${sent[3]} message.undelivered`,
          `${done} message.delivered`,
        ].sort(),
      );

      // The vendor pushes it all again: every receipt a duplicate, nothing written.
      expect(
        await receipts.apply(
          'prv_mix',
          push.map(([r]) => r),
          T0 + 300,
        ),
      ).toEqual(push.map(() => 'duplicate'));
      expect(await events()).toHaveLength(before.length);
      expect(await Promise.all(sent.map(view))).toEqual([
        { status: 'undelivered', code: 'UNDELIV' },
        { status: 'delivered', code: 'DELIVRD' },
        { status: 'delivered', code: 'LATER' },
        { status: 'undelivered', code: 'LAST' },
      ]);
      expect(
        await database.db
          .selectFrom('pending_receipts')
          .select('received_at')
          .where('provider_id', '=', 'prv_mix')
          .where('received_at', '=', T0 + 300)
          .execute(),
      ).toEqual([]);

      // A settle later applies the one that waited for it.
      const late = await sentBy(tenant.id, 'prv_mix', 'u4');
      expect(await view(late)).toEqual({ status: 'delivered', code: 'C4' });
    });
  });
}

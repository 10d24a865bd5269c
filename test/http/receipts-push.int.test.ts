/**
 * The attack's reproduction of a large receipt push (issue 33, item 6), against a real server
 * (a socket, not `inject`) on every database: 10,500 Aliyun reports in one push, ten for sent
 * messages and the rest for ids no message has, then the vendor's retry of the same push. Every
 * entry is applied (it took 4 statements an entry: 12.7 s on PostgreSQL), the retry finds each a
 * duplicate and changes nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';
import { startApp, type TestApp } from './support.js';

const COUNT = 10_500;

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `a push of 10,500 receipts on ${backend.name}`, () => {
    let database: { url: string; drop(): Promise<void> };
    let t: TestApp;
    let base: string;

    beforeAll(async () => {
      database = await backend.create();
      t = await startApp({ SLUICE_DB_URL: database.url });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const address = t.app.server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      base = `http://127.0.0.1:${address.port}`;
    });

    afterAll(async () => {
      await t?.close();
      await database?.drop();
    });

    it('applies every entry, and the retry finds each a duplicate', async () => {
      const tenant = await t.createTenant();
      const provider = await t.runtime.repositories.providers.create({
        scope: tenant.id,
        channel: 'sms',
        kind: 'aliyun-sms',
        name: 'aliyun-bulk',
        qps: 10,
        config: {},
      });
      const issued = await t.admin('POST', `/v1/admin/providers/${provider.id}/receipt-token`);
      const { path } = issued.json() as { path: string };
      const messages = t.runtime.repositories.messages;
      const sent: string[] = [];
      for (let i = 0; i < 10; i++) {
        const m = await messages.insert({
          tenantId: tenant.id,
          channel: 'sms',
          recipient: '+8613811112222',
          payload: { body: 'x' },
          now: t.clock.now(),
        });
        const [claimed] = await messages.claimMany([m.id], { now: t.clock.now(), leaseMs: 5000 });
        expect(
          await messages.markSent(m.id, {
            attempt: claimed!.attempts,
            now: t.clock.now(),
            providerId: provider.id,
            providerMessageId: `bulk-${i * 1000}`,
          }),
        ).toBe(true);
        sent.push(m.id);
      }
      const reports = Array.from({ length: COUNT }, (_, i) => ({
        biz_id: `bulk-${i}`,
        success: i % 2 === 0,
        err_code: i % 2 === 0 ? 'DELIVERED' : 'MK:0001',
      }));
      const push = async () => {
        const answer = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(reports),
        });
        expect(answer.status, await answer.clone().text()).toBe(200);
        expect(await answer.json()).toEqual({ code: 0, msg: '接收成功' });
      };
      const counted = async () => {
        const values = (await t.runtime.metrics.registry.getSingleMetric('sluice_receipts_total')?.get())?.values ?? [];
        const of = (outcome: string) =>
          values.filter((v) => v.labels.provider === provider.name && v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
        return { applied: of('applied'), pending: of('pending'), duplicate: of('duplicate') };
      };
      const waiting = async () =>
        Number(
          (
            await t.runtime.database.db
              .selectFrom('pending_receipts')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('provider_id', '=', provider.id)
              .executeTakeFirstOrThrow()
          ).n,
        );

      await push();
      expect(await counted()).toEqual({ applied: 10, pending: COUNT - 10, duplicate: 0 });
      expect(await waiting()).toBe(COUNT - 10);
      for (const id of sent)
        expect((await t.call(tenant.apiKey, 'GET', `/v1/messages/${id}`)).json()).toMatchObject({
          status: 'delivered',
          receipt: { code: 'DELIVERED' },
        });

      await push();
      expect(await counted()).toEqual({ applied: 10, pending: COUNT - 10, duplicate: COUNT });
      expect(await waiting()).toBe(COUNT - 10);
    });
  });
}

/**
 * GET /v1/admin/tenants/:id/backlog on every database: per channel and lane, the due, scheduled
 * later and in-flight counts and the oldest due message, of that tenant only; admin only.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TenantBacklog } from '../../src/api/tenants.js';
import type { NewMessageRow } from '../../src/storage/index.js';
import { expectError, startApp, type TestApp } from '../http/support.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `tenant backlog on ${backend.name}`, () => {
    let database: { url: string; drop(): Promise<void> };
    let t: TestApp;
    beforeAll(async () => {
      database = await backend.create();
      t = await startApp({ SLUICE_DB_URL: database.url });
    });
    afterAll(async () => {
      await t?.close();
      await database?.drop();
    });

    const read = async (id: string) => {
      const response = await t.admin('GET', `/v1/admin/tenants/${id}/backlog`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json() as TenantBacklog;
    };
    const lane = (backlog: TenantBacklog, channel: string, name: string) =>
      backlog.lanes.find((row) => row.channel === channel && row.lane === name);

    it("counts a tenant's due, scheduled-later and sending messages per channel and lane, and names its oldest due", async () => {
      const a = await t.createTenant(`backlog-a-${backend.name}`);
      const b = await t.createTenant(`backlog-b-${backend.name}`);
      const messages = t.runtime.repositories.messages;
      const T = t.clock.now();
      const insert = (tenantId: string, extra: Partial<NewMessageRow>) =>
        messages.insert({ tenantId, channel: 'sms', recipient: '+8613800000000', payload: { body: 'x' }, now: T, ...extra });

      // Nothing yet: every channel and lane, zeros.
      const empty = await read(a.id);
      expect(empty.tenantId).toBe(a.id);
      expect(empty.lanes).toHaveLength(6);
      for (const row of empty.lanes) expect(row).toMatchObject({ due: 0, scheduledLater: 0, sending: 0, oldestDue: null });

      // Another tenant's message at A's oldest due time, with a lower id: never A's.
      await insert(b.id, { id: '0000000000000000000000000B', dueAt: T - 30_000, now: T - 30_000 });
      for (let i = 0; i < 4; i++) await insert(b.id, { dueAt: T - 40_000, now: T - 40_000 });
      const oldest = await insert(a.id, { dueAt: T - 30_000, now: T - 30_000 });
      await insert(a.id, { dueAt: T - 20_000, now: T - 20_000 });
      // Scheduled, and due by the time of the read: due, not later.
      await insert(a.id, { dueAt: T + 1_000 });
      await insert(a.id, { dueAt: T + 3_600_000 });
      await insert(a.id, { dueAt: T + 7_200_000 });
      const claimed = await insert(a.id, { dueAt: T - 50_000, now: T - 50_000 });
      expect(await messages.claim(claimed.id, { now: T, leaseMs: 60_000 })).toBeDefined();
      const bulk = await insert(a.id, { priority: 'bulk', dueAt: T - 10_000, now: T - 10_000 });
      await insert(a.id, { channel: 'email', recipient: 'a@example.com', priority: 'bulk', dueAt: T + 60_000 });
      // Finished: not a backlog.
      const sent = await insert(a.id, { channel: 'email', recipient: 'b@example.com', dueAt: T - 5_000, now: T - 5_000 });
      const sending = await messages.claim(sent.id, { now: T, leaseMs: 60_000 });
      expect(await messages.markSent(sent.id, { attempt: sending!.attempts, now: T })).toBe(true);
      const canceled = await insert(a.id, { channel: 'webhook', recipient: 'https://hooks.example.com/x', dueAt: T + 60_000 });
      expect(await messages.cancel(a.id, canceled.id, T)).toBe('canceled');

      t.clock.set(T + 2_000);
      const backlog = await read(a.id);
      expect(backlog.at).toBe(new Date(T + 2_000).toISOString());
      expect(lane(backlog, 'sms', 'transactional')).toEqual({
        channel: 'sms',
        lane: 'transactional',
        due: 3,
        scheduledLater: 2,
        sending: 1,
        oldestDue: { id: oldest.id, dueAt: new Date(T - 30_000).toISOString() },
      });
      expect(lane(backlog, 'sms', 'bulk')).toEqual({
        channel: 'sms',
        lane: 'bulk',
        due: 1,
        scheduledLater: 0,
        sending: 0,
        oldestDue: { id: bulk.id, dueAt: new Date(T - 10_000).toISOString() },
      });
      expect(lane(backlog, 'email', 'bulk')).toMatchObject({ due: 0, scheduledLater: 1, sending: 0, oldestDue: null });
      for (const row of backlog.lanes.filter(
        (row) => row.channel === 'webhook' || (row.channel === 'email' && row.lane === 'transactional'),
      ))
        expect(row).toMatchObject({ due: 0, scheduledLater: 0, sending: 0, oldestDue: null });

      // B's own: its five, its oldest the lower id.
      expect(lane(await read(b.id), 'sms', 'transactional')).toMatchObject({
        due: 5,
        oldestDue: { dueAt: new Date(T - 40_000).toISOString() },
      });
      t.clock.set(T);
    });

    it('is for the admin only, 404 for an unknown tenant', async () => {
      const tenant = await t.createTenant(`backlog-own-${backend.name}`);
      expectError(await t.call(tenant.apiKey, 'GET', `/v1/admin/tenants/${tenant.id}/backlog`), 401, 'UNAUTHORIZED');
      expectError(await t.app.inject({ method: 'GET', url: `/v1/admin/tenants/${tenant.id}/backlog` }), 401, 'UNAUTHORIZED');
      expectError(await t.admin('GET', '/v1/admin/tenants/no-such-tenant/backlog'), 404, 'NOT_FOUND');
      expectError(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/backlog?channel=sms`), 400, 'INVALID_REQUEST');
    });
  });
}

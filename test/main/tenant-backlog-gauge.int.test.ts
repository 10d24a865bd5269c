/**
 * `sluice_tenant_backlog` on every database: with 15 tenants it names the 10 with the largest due
 * backlog and sums the other 5 under tenant="other", per channel; only due messages count; a
 * refresh replaces what the previous one set. A worker counts it from its start; an API-only
 * instance does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/main/runtime.js';
import { type Service, startRoles } from '../../src/main/service.js';
import { keepTenantBacklogGauge, type TenantBacklogGauge } from '../../src/main/tenant-backlog-gauge.js';
import { loadSettings } from '../../src/settings/settings.js';
import { silentConsole, tempDir, testEnv, waitFor } from '../delivery/delivery-support.js';
import { startApp, type TestApp } from '../http/support.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `sluice_tenant_backlog on ${backend.name}`, () => {
    let database: { url: string; drop(): Promise<void> };
    let t: TestApp;
    let gauge: TenantBacklogGauge;
    beforeAll(async () => {
      database = await backend.create();
      t = await startApp({ SLUICE_DB_URL: database.url });
      // The timer never fires during the test: each refresh is the test's.
      gauge = keepTenantBacklogGauge(t.runtime, { intervalMs: 3_600_000 });
    });
    afterAll(async () => {
      await gauge?.close();
      await t?.close();
      await database?.drop();
    });

    const series = async () => {
      const metric = await t.runtime.metrics.tenantBacklog.get();
      return Object.fromEntries(metric.values.map((value) => [`${value.labels.tenant}/${value.labels.channel}`, value.value]));
    };

    it('names the 10 tenants with the largest due backlog and sums the rest under "other", per channel', async () => {
      const messages = t.runtime.repositories.messages;
      const T = t.clock.now();
      const tenants: string[] = [];
      for (let i = 0; i < 15; i++) {
        const { id } = await t.createTenant(`backlog-gauge-${backend.name}-${i}`);
        tenants.push(id);
        // Tenant i: i + 1 due sms, and a message scheduled later that does not count.
        for (let n = 0; n <= i; n++)
          await messages.insert({ tenantId: id, channel: 'sms', recipient: '+8613800000000', payload: { body: 'x' }, now: T });
        await messages.insert({
          tenantId: id,
          channel: 'sms',
          recipient: '+8613800000000',
          payload: { body: 'x' },
          now: T,
          dueAt: T + 60_000,
        });
      }
      // One of the small tenants also has email waiting; a large one has a bulk email.
      await messages.insert({ tenantId: tenants[0]!, channel: 'email', recipient: 'a@example.com', payload: { body: 'x' }, now: T });
      await messages.insert({
        tenantId: tenants[14]!,
        channel: 'email',
        recipient: 'a@example.com',
        payload: { body: 'x' },
        now: T,
        priority: 'bulk',
      });

      await gauge.refresh();
      const first = await series();
      const expected: Record<string, number> = {};
      for (let i = 5; i < 15; i++) expected[`${tenants[i]}/sms`] = i + 1;
      expected[`${tenants[14]}/email`] = 1;
      expected['other/sms'] = 1 + 2 + 3 + 4 + 5;
      expected['other/email'] = 1;
      expect(first).toEqual(expected);
      expect(new Set(Object.keys(first).map((key) => key.split('/')[0])).size).toBe(11);

      // Later, the scheduled ones are due too (16 more); a refresh replaces every series.
      t.clock.set(T + 60_000);
      await gauge.refresh();
      const second = await series();
      expect(second[`${tenants[14]}/sms`]).toBe(16);
      expect(second['other/sms']).toBe(15 + 5);
      expect(Object.keys(second)).toHaveLength(Object.keys(expected).length);
      const text = await t.runtime.metrics.text();
      expect(text.match(/^sluice_tenant_backlog\{/gm)).toHaveLength(Object.keys(expected).length);
      t.clock.set(T);
    });
  });
}

describe('sluice_tenant_backlog in a running sluice', () => {
  const temp = tempDir();
  afterAll(() => temp.cleanup());
  const serve = async (roles: string) =>
    startRoles(
      await createRuntime(
        loadSettings(testEnv(temp.dir, undefined, { SLUICE_HOST: '127.0.0.1', SLUICE_PORT: '0', SLUICE_ROLES: roles }), undefined),
      ),
      { fallbackProvider: silentConsole() },
    );
  const scrape = async (service: Service) =>
    (await (await fetch(`${service.address}/metrics`)).text()).match(/^sluice_tenant_backlog\{.*$/gm) ?? [];

  it('is counted by a worker from its start, not by an API-only instance', async () => {
    // A suspended tenant's messages stay due and unsent: a backlog the worker cannot drain.
    const api = await serve('api');
    let tenantId: string;
    try {
      const tenant = await api.services.tenants.createTenant('held');
      tenantId = tenant.id;
      const sent = await api.services.messages.send(tenant.apiKey, { channel: 'sms', to: '+8613800000001', body: 'x' });
      expect(sent.status).toBe('queued');
      await api.services.tenants.updateTenant(tenant.id, { status: 'suspended' });
      expect(await scrape(api)).toEqual([]);
    } finally {
      await api.stop();
    }
    const worker = await serve('worker');
    try {
      const expected = `sluice_tenant_backlog{tenant="${tenantId}",channel="sms"} 1`;
      expect(await waitFor(async () => (await scrape(worker)).some((line) => line.startsWith(expected)), 10_000)).toBe(true);
    } finally {
      await worker.stop();
    }
  }, 60_000);
});

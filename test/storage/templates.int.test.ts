/**
 * Templates, quiet hours and priority lanes (migration 0007) on every backend: SQLite, PostgreSQL
 * and MySQL/MariaDB when their servers are configured.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import { createRepositories, type Database, migrateToLatest, openDatabase, type Repositories } from '../../src/storage/index.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const T0 = 1_700_000_000_000;
const uniqueName = () => `sluice_tpl_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `templates storage on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let database: Database;
    let repos: Repositories;
    const clock = new ManualClock(T0);

    beforeAll(async () => {
      created = await backend.create();
      database = await openDatabase(created.url);
      await migrateToLatest(database);
      repos = createRepositories(database, { clock });
    });
    afterAll(async () => {
      await repos?.close();
      await created?.drop();
    });
    const newTenant = async () => (await repos.tenants.create({ name: uniqueName() })).tenant;

    it('stores versions, answers the current one, retires and revives', async () => {
      const tenant = await newTenant();
      const spec = (body: string) => ({ params: { code: { type: 'string' } }, body });
      const [first, second] = await Promise.all([
        repos.templates.put(tenant.id, 'sms', 'otp', spec('a {{code}}')),
        repos.templates.put(tenant.id, 'sms', 'otp', spec('b {{code}}')),
      ]);
      expect([first.version, second.version].sort()).toEqual([1, 2]);
      expect((await repos.templates.current(tenant.id, 'sms', 'otp'))?.version).toBe(2);
      expect((await repos.templates.versions(tenant.id, 'sms', 'otp')).map((v) => v.version)).toEqual([2, 1]);
      await repos.templates.put(tenant.id, 'email', 'welcome', { params: {}, subject: 's', body: 'b' });
      expect((await repos.templates.listCurrent(tenant.id)).map((v) => `${v.channel}/${v.name}@${v.version}`)).toEqual([
        'email/welcome@1',
        'sms/otp@2',
      ]);
      expect(await repos.templates.retire(tenant.id, 'sms', 'otp')).toBe(true);
      expect(await repos.templates.retire(tenant.id, 'sms', 'otp')).toBe(false);
      expect(await repos.templates.current(tenant.id, 'sms', 'otp')).toBeUndefined();
      expect((await repos.templates.put(tenant.id, 'sms', 'otp', spec('c'))).version).toBe(3);
      expect((await repos.templates.current(tenant.id, 'sms', 'otp'))?.spec).toEqual(spec('c'));
      // Another tenant sees none of them.
      expect(await repos.templates.listCurrent((await newTenant()).id)).toEqual([]);
    });

    it('sets, replaces and removes quiet hours', async () => {
      const tenant = await newTenant();
      const quiet = { timeZone: 'Asia/Shanghai', windows: [{ from: '21:00', to: '08:00' }], applies: 'bulk' as const };
      await repos.quietHours.set(tenant.id, 'sms', quiet);
      await repos.quietHours.set(tenant.id, 'sms', { ...quiet, applies: 'all' });
      expect(await repos.quietHours.get(tenant.id, 'sms')).toMatchObject({ ...quiet, applies: 'all' });
      expect(await repos.quietHours.get(tenant.id, 'email')).toBeUndefined();
      expect(await repos.quietHours.remove(tenant.id, 'sms')).toBe(true);
      expect(await repos.quietHours.remove(tenant.id, 'sms')).toBe(false);
    });

    it('a claim takes due transactional messages before bulk ones, whatever their due times', async () => {
      await database.db.deleteFrom('delivery_attempts').execute();
      await database.db.deleteFrom('messages').execute();
      const tenant = await newTenant();
      const insert = (i: number, priority: 'bulk' | 'transactional') =>
        repos.messages.insert({
          tenantId: tenant.id,
          channel: 'sms',
          recipient: `+86138000${i}`,
          payload: { body: 'x' },
          now: T0 - 10_000 + i,
          priority,
        });
      for (let i = 0; i < 6; i++) await insert(i, 'bulk');
      for (let i = 6; i < 9; i++) await insert(i, 'transactional');
      const claim = (limit: number) =>
        repos.messages.claimDue({ channel: 'sms', partition: 0, partitions: 1, now: T0, limit, leaseMs: 30_000 });
      const first = await claim(4);
      expect(first.map((m) => m.priority)).toEqual(['transactional', 'transactional', 'transactional', 'bulk']);
      expect((await claim(10)).map((m) => m.priority)).toEqual(Array(5).fill('bulk'));
      const listed = await repos.messages.listDueIds({ channel: 'sms', partition: 0, partitions: 1, untilMs: T0 + 60_000, limit: 100 });
      expect(listed.filter((entry) => entry.priority === 'bulk')).toHaveLength(6);
    });
  });
}

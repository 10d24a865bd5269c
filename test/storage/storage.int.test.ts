/**
 * One storage suite, every backend: SQLite (a temp file, always), PostgreSQL and MySQL/MariaDB
 * (when their servers are configured). Each run creates its own database and drops it after,
 * so parallel runs on the shared servers never meet.
 */
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/limiter/clock.js';
import {
  createRepositories,
  type Database,
  DuplicateIdempotencyKeyError,
  DuplicateNameError,
  hashApiKey,
  type Message,
  migrateToLatest,
  migrationsFor,
  type NewMessageRow,
  openDatabase,
  pendingMigrations,
  type RecipientSearch,
  type Repositories,
  SecretBox,
} from '../../src/storage/index.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const uniqueName = () => `sluice_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

const T0 = 1_700_000_000_000;

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `storage on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let database: Database;
    let repos: Repositories;
    let pendingBefore: string[];
    const clock = new ManualClock(T0);
    const secretBox = new SecretBox(Buffer.alloc(32, 7));

    beforeAll(async () => {
      created = await backend.create();
      database = await openDatabase(created.url);
      pendingBefore = await pendingMigrations(database);
      await migrateToLatest(database);
      repos = createRepositories(database, { secretBox, clock });
    });

    afterAll(async () => {
      await repos?.close();
      await created?.drop();
    });

    const newTenant = async (name = uniqueName()) => (await repos.tenants.create({ name })).tenant;

    /** claimDue works per channel across tenants: tests that use it start from an empty queue. */
    const emptyQueue = async () => {
      await database.db.deleteFrom('delivery_attempts').execute();
      await database.db.deleteFrom('messages').execute();
    };

    const message = (tenantId: string, extra: Partial<NewMessageRow> = {}): NewMessageRow => ({
      tenantId,
      channel: 'sms',
      recipient: '+8613800000000',
      payload: { template: 'otp', params: { code: '1234' } },
      now: T0,
      ...extra,
    });

    describe('migrations', () => {
      it('reports the pending ones, applies them, and re-running is a no-op', async () => {
        expect(pendingBefore).toEqual([
          '0001-initial',
          '0002-provider-name-unique',
          '0003-tenant-status-index',
          '0004-blacklist-canonical-keys',
          '0005-risk-rule-sets',
          '0006-webhooks',
          '0007-templates-priority-quiet-hours',
          '0008-messages-tenant-recipient-index',
          '0009-messages-tenant-index',
          '0010-broker-hand-off',
          '0011-sms-fraud',
          '0012-message-fraud-columns',
          '0013-limiter-snapshots',
          '0018-tenant-send-weight',
          '0020-consent',
          '0021-message-trace-context',
          '0022-config-changes',
        ]);
        expect(await pendingMigrations(database)).toEqual([]);
        expect(await migrateToLatest(database)).toEqual([]);
        await database.ping();
      });

      it('reads BIGINT times back as numbers', async () => {
        const far = 4_102_444_800_123; // year 2100: beyond 32 bits
        const tenant = await newTenant();
        const inserted = await repos.messages.insert(message(tenant.id, { now: far }));
        const row = await database.db.selectFrom('messages').selectAll().where('id', '=', inserted.id).executeTakeFirstOrThrow();
        expect(row.created_at).toBe(far);
        expect(typeof row.due_at).toBe('number');
      });
    });

    describe('tenants', () => {
      it('creates a tenant with a key shown once and stored only as its hash', async () => {
        const { tenant, apiKey, keyId } = await repos.tenants.create({ name: 'acme-' + uniqueName(), qpsLimit: 50 });
        expect(tenant.status).toBe('active');
        expect(tenant.qpsLimit).toBe(50);
        expect(apiKey).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
        const stored = await database.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
        expect(stored.key_hash).toBe(hashApiKey(apiKey));
        expect(stored.key_hash).not.toContain(apiKey);
        expect(apiKey.startsWith(stored.key_prefix)).toBe(true);
        expect(stored.key_prefix.length).toBeLessThan(16);

        expect((await repos.tenants.findByApiKey(apiKey))?.tenant).toEqual(tenant);
        expect(await repos.tenants.findByApiKey(apiKey + 'x')).toBeUndefined();
        expect(await repos.tenants.get(tenant.id)).toEqual(tenant);
        expect(await repos.tenants.findByName(tenant.name)).toEqual(tenant);
        expect(await repos.tenants.get('nope')).toBeUndefined();
      });

      it('rejects a duplicate name with a typed error', async () => {
        const name = uniqueName();
        await repos.tenants.create({ name });
        await expect(repos.tenants.create({ name })).rejects.toBeInstanceOf(DuplicateNameError);
      });

      it('lists in creation order with keyset paging', async () => {
        const a = await newTenant();
        const b = await newTenant();
        const all = await repos.tenants.list({ limit: 1000 });
        const ids = all.map((t) => t.id);
        expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
        expect((await repos.tenants.list({ after: a.id, limit: 1000 })).map((t) => t.id)).not.toContain(a.id);
        expect(await repos.tenants.list({ limit: 1 })).toHaveLength(1);
      });

      it('updates status, QPS and daily quotas', async () => {
        const tenant = await newTenant();
        clock.advance(10);
        const updated = await repos.tenants.update(tenant.id, { status: 'suspended', qpsLimit: 7, dailyQuotas: { sms: 100, email: 5 } });
        expect(updated).toMatchObject({ status: 'suspended', qpsLimit: 7, updatedAt: clock.now() });
        expect(await repos.tenants.getDailyQuotas(tenant.id)).toEqual({ sms: 100, email: 5 });
        await repos.tenants.setDailyQuota(tenant.id, 'sms', null);
        await repos.tenants.setDailyQuota(tenant.id, 'email', 9);
        expect(await repos.tenants.getDailyQuotas(tenant.id)).toEqual({ email: 9 });
        expect(await repos.tenants.update(tenant.id, { qpsLimit: null })).toMatchObject({ qpsLimit: null, status: 'suspended' });
        // Same clock value, same status: still reported as updated (MySQL counts matched rows).
        expect(await repos.tenants.update(tenant.id, { status: 'suspended' })).toBeDefined();
        expect(await repos.tenants.update('nope', { status: 'active' })).toBeUndefined();
      });

      it('rotates keys: the old key stops working, the new one works', async () => {
        const { tenant, apiKey: first } = await repos.tenants.create({ name: uniqueName() });
        const rotated = await repos.tenants.rotateKey(tenant.id);
        expect(rotated).toBeDefined();
        expect(await repos.tenants.findByApiKey(first)).toBeUndefined();
        expect((await repos.tenants.findByApiKey(rotated!.apiKey))?.tenant.id).toBe(tenant.id);

        const kept = await repos.tenants.rotateKey(tenant.id, { revokeOthers: false });
        expect((await repos.tenants.findByApiKey(rotated!.apiKey))?.tenant.id).toBe(tenant.id);
        expect(await repos.tenants.revokeKey(tenant.id, rotated!.keyId)).toBe(true);
        expect(await repos.tenants.revokeKey(tenant.id, rotated!.keyId)).toBe(false);
        expect(await repos.tenants.findByApiKey(rotated!.apiKey)).toBeUndefined();
        expect((await repos.tenants.findByApiKey(kept!.apiKey))?.keyId).toBe(kept!.keyId);

        const keys = await repos.tenants.listKeys(tenant.id);
        expect(keys).toHaveLength(3);
        expect(keys.filter((k) => k.revokedAt === null).map((k) => k.id)).toEqual([kept!.keyId]);
        expect(JSON.stringify(keys)).not.toContain(kept!.apiKey);
        expect(await repos.tenants.rotateKey('nope')).toBeUndefined();
      });
    });

    describe('rules', () => {
      it('sets, bumps the version, keeps or clears the fallback, lists and deletes', async () => {
        const tenant = await newTenant();
        expect(await repos.rules.get(tenant.id, 'sms')).toBeUndefined();
        const v1 = await repos.rules.set(tenant.id, 'sms', {
          rules: [{ windowSeconds: 60, limit: 1, banSeconds: 0 }],
          fallback: { mode: 'local' },
        });
        expect(v1).toMatchObject({ version: 1, fallback: { mode: 'local' } });
        const v2 = await repos.rules.set(tenant.id, 'sms', {
          rules: [{ windowSeconds: 300, limit: 3, banSeconds: 600, algorithm: 'sliding-log' }],
        });
        expect(v2.version).toBe(2);
        expect(v2.rules).toEqual([{ windowSeconds: 300, limit: 3, banSeconds: 600, algorithm: 'sliding-log' }]);
        expect(v2.fallback).toEqual({ mode: 'local' });
        const v3 = await repos.rules.set(tenant.id, 'sms', { rules: [], fallback: null });
        expect(v3).toMatchObject({ version: 3, fallback: null, rules: [] });
        await repos.rules.set(tenant.id, 'email', { rules: [{ windowSeconds: 1, limit: 1, banSeconds: 0 }] });
        expect((await repos.rules.listForTenant(tenant.id)).map((r) => r.channel)).toEqual(['email', 'sms']);
        expect(await repos.rules.get(tenant.id, 'sms')).toEqual(v3);
        expect(await repos.rules.delete(tenant.id, 'sms')).toBe(true);
        expect(await repos.rules.get(tenant.id, 'sms')).toBeUndefined();
      });

      it('concurrent first writes both land, as versions 1 and 2', async () => {
        const tenant = await newTenant();
        const results = await Promise.all([
          repos.rules.set(tenant.id, 'webhook', { rules: [{ windowSeconds: 1, limit: 1, banSeconds: 0 }] }),
          repos.rules.set(tenant.id, 'webhook', { rules: [{ windowSeconds: 2, limit: 2, banSeconds: 0 }] }),
        ]);
        expect(results.map((r) => r.version).sort()).toEqual([1, 2]);
      });
    });

    describe('risk rules', () => {
      it('sets per action, bumps the version, lists, deletes, and goes with its tenant', async () => {
        const tenant = await newTenant();
        const rule = { name: 'phone-5m', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 3 };
        expect(await repos.riskRules.get(tenant.id, 'otp')).toBeUndefined();
        const v1 = await repos.riskRules.set(tenant.id, 'otp', [rule]);
        expect(v1).toMatchObject({ tenantId: tenant.id, action: 'otp', version: 1, rules: [rule] });
        const v2 = await repos.riskRules.set(tenant.id, 'otp', [{ ...rule, limit: 5 }]);
        expect(v2.version).toBe(2);
        await repos.riskRules.set(tenant.id, 'login', [rule]);
        expect((await repos.riskRules.listForTenant(tenant.id)).map((r) => r.action)).toEqual(['login', 'otp']);
        expect(await repos.riskRules.get(tenant.id, 'otp')).toEqual(v2);
        const other = await newTenant();
        expect(await repos.riskRules.get(other.id, 'otp')).toBeUndefined();
        expect(await repos.riskRules.delete(tenant.id, 'login')).toBe(true);
        expect(await repos.riskRules.delete(tenant.id, 'login')).toBe(false);
        await expect(repos.riskRules.set('no-such-tenant', 'otp', [rule])).rejects.toThrow();
      });

      it('concurrent first writes both land, as versions 1 and 2', async () => {
        const tenant = await newTenant();
        const rule = { name: 'r', kind: 'window', key: ['user'], windowSeconds: 1, limit: 1 };
        const results = await Promise.all([repos.riskRules.set(tenant.id, 'a', [rule]), repos.riskRules.set(tenant.id, 'a', [rule])]);
        expect(results.map((r) => r.version).sort()).toEqual([1, 2]);
      });
    });

    describe('blacklist', () => {
      it('checks tenant and global scopes and every-channel entries in one query', async () => {
        const tenant = await newTenant();
        const other = await newTenant();
        const globalRecipient = `+1555${Math.floor(Math.random() * 1e7)}`;
        expect(await repos.blacklist.add({ scope: tenant.id, channel: 'sms', recipient: '+8613900000001', reason: 'complaint' })).toBe(
          true,
        );
        expect(await repos.blacklist.add({ scope: tenant.id, channel: 'sms', recipient: '+8613900000001' })).toBe(false);
        await repos.blacklist.add({ scope: tenant.id, channel: '*', recipient: 'a@example.com' });
        await repos.blacklist.add({ scope: '*', channel: 'sms', recipient: globalRecipient });

        expect(await repos.blacklist.isBlacklisted(tenant.id, 'sms', '+8613900000001')).toBe(true);
        expect(await repos.blacklist.isBlacklisted(tenant.id, 'email', '+8613900000001')).toBe(false);
        expect(await repos.blacklist.isBlacklisted(other.id, 'sms', '+8613900000001')).toBe(false);
        expect(await repos.blacklist.isBlacklisted(tenant.id, 'email', 'a@example.com')).toBe(true);
        expect(await repos.blacklist.isBlacklisted(tenant.id, 'email', 'A@example.com')).toBe(false); // byte-wise, even on MySQL
        expect(await repos.blacklist.isBlacklisted(other.id, 'sms', globalRecipient)).toBe(true);
        expect(await repos.blacklist.isBlacklisted(other.id, 'email', globalRecipient)).toBe(false);

        const listed = await repos.blacklist.list(tenant.id);
        expect(listed.map((e) => [e.channel, e.recipient])).toEqual([
          ['*', 'a@example.com'],
          ['sms', '+8613900000001'],
        ]);
        expect(listed[1]?.reason).toBe('complaint');
        expect(await repos.blacklist.list(tenant.id, { after: listed[0]! })).toEqual([listed[1]]);
        expect(await repos.blacklist.list(tenant.id, { channel: 'sms' })).toEqual([listed[1]]);

        expect(await repos.blacklist.remove({ scope: tenant.id, channel: 'sms', recipient: '+8613900000001' })).toBe(true);
        expect(await repos.blacklist.remove({ scope: tenant.id, channel: 'sms', recipient: '+8613900000001' })).toBe(false);
        expect(await repos.blacklist.isBlacklisted(tenant.id, 'sms', '+8613900000001')).toBe(false);
      });

      it('migration 0004 rewrites entries of the old spellings to their keys (a re-run changes nothing else)', async () => {
        const tenant = await newTenant();
        const row = (channel: 'email' | 'webhook' | '*', recipient: string, createdAt: number) => ({
          scope: tenant.id,
          channel,
          recipient,
          reason: null,
          created_at: createdAt,
        });
        await database.db
          .insertInto('blacklist')
          .values([row('email', 'Bob+x@example.com', T0 + 1), row('email', 'bob@example.com', T0 + 2), row('*', '138.0013.8002', T0 + 3)])
          .execute();
        await migrationsFor(database.dialect, { defaultRegion: 'CN' })['0004-blacklist-canonical-keys']!.up(database.db);
        const listed = await repos.blacklist.list(tenant.id);
        expect(listed.map((e) => [e.channel, e.recipient, e.createdAt])).toEqual([
          ['*', '+8613800138002', T0 + 3],
          ['*', '138.0013.8002', T0 + 3],
          ['email', 'bob@example.com', T0 + 1],
        ]);
      });
    });

    describe('providers', () => {
      it('encrypts secrets at rest and reveals them only on request', async () => {
        const tenant = await newTenant();
        const clearSecret = 'smtp-password-' + uniqueName();
        const created = await repos.providers.create({
          scope: tenant.id,
          channel: 'email',
          kind: 'smtp',
          name: 'relay',
          qps: 10,
          config: { host: '127.0.0.1', port: 2525 },
          secret: clearSecret,
        });
        expect(created).toMatchObject({ hasSecret: true, enabled: true, config: { host: '127.0.0.1', port: 2525 } });
        expect(JSON.stringify(created)).not.toContain(clearSecret);
        const raw = await database.db.selectFrom('providers').select('secret').where('id', '=', created.id).executeTakeFirstOrThrow();
        expect(raw.secret).toBeTruthy();
        expect(raw.secret).not.toContain(clearSecret);
        expect(raw.secret).not.toContain(Buffer.from(clearSecret).toString('base64').slice(0, 12));
        expect(await repos.providers.revealSecret(created.id)).toBe(clearSecret);

        // The ciphertext is bound to its row: copied onto another provider it does not open.
        const other = await repos.providers.create({ scope: tenant.id, channel: 'email', kind: 'smtp', name: 'copy', qps: 1 });
        expect(other.hasSecret).toBe(false);
        expect(await repos.providers.revealSecret(other.id)).toBeUndefined();
        await database.db.updateTable('providers').set({ secret: raw.secret }).where('id', '=', other.id).execute();
        await expect(repos.providers.revealSecret(other.id)).rejects.toThrow();

        // A name is unique in its scope and channel, in SQL too: the race the admin check misses.
        await expect(repos.providers.create({ scope: tenant.id, channel: 'email', kind: 'smtp', name: 'relay', qps: 1 })).rejects.toThrow(
          DuplicateNameError,
        );
        await expect(repos.providers.update(other.id, { name: 'relay' })).rejects.toThrow(DuplicateNameError);
        expect((await repos.providers.create({ scope: tenant.id, channel: 'sms', kind: 'console', name: 'relay', qps: 1 })).name).toBe(
          'relay',
        );

        const updated = await repos.providers.update(created.id, { secret: null, qps: 20 });
        expect(updated).toMatchObject({ hasSecret: false, qps: 20 });
        expect(await repos.providers.update('nope', { qps: 1 })).toBeUndefined();

        const noKey = createRepositories(database).providers;
        await expect(noKey.create({ scope: '*', channel: 'sms', kind: 'console', name: 'x', qps: 1, secret: 's' })).rejects.toThrow(
          /encryption key/,
        );
      });

      it('lists enabled providers for a tenant, own and shared, in failover order', async () => {
        const tenant = await newTenant();
        const other = await newTenant();
        const channel = 'webhook';
        await database.db.deleteFrom('providers').where('channel', '=', channel).execute();
        const sharedFirst = await repos.providers.create({ scope: '*', channel, kind: 'http', name: 'shared-1', priority: 1, qps: 5 });
        const ownTie = await repos.providers.create({ scope: tenant.id, channel, kind: 'feishu', name: 'own-10', priority: 10, qps: 5 });
        const sharedTie = await repos.providers.create({ scope: '*', channel, kind: 'slack', name: 'shared-10', priority: 10, qps: 5 });
        await repos.providers.create({ scope: tenant.id, channel, kind: 'http', name: 'disabled', priority: 0, qps: 5, enabled: false });
        await repos.providers.create({ scope: other.id, channel, kind: 'http', name: 'foreign', priority: 0, qps: 5 });
        await repos.providers.create({ scope: tenant.id, channel: 'sms', kind: 'console', name: 'sms', priority: 0, qps: 5 });

        const names = (await repos.providers.listEnabledFor(tenant.id, channel)).map((p) => p.name);
        expect(names).toEqual([sharedFirst.name, ownTie.name, sharedTie.name]);
        expect((await repos.providers.list({ scope: tenant.id, channel })).map((p) => p.name)).toEqual(['disabled', 'own-10']);
        expect(await repos.providers.delete(sharedFirst.id)).toBe(true);
        expect(await repos.providers.delete(sharedFirst.id)).toBe(false);
        expect(await repos.providers.get(sharedFirst.id)).toBeUndefined();
        expect((await repos.providers.get(ownTie.id))?.kind).toBe('feishu');
      });
    });

    describe('messages', () => {
      it('group-commits concurrent inserts: all committed, far fewer transactions than inserts', async () => {
        const tenant = await newTenant();
        const before = { ...repos.messages.groupCommitStats };
        const inserted = await Promise.all(
          Array.from({ length: 200 }, (_, i) => repos.messages.insert(message(tenant.id, { recipient: `+86138000${i}` }))),
        );
        const after = repos.messages.groupCommitStats;
        expect(after.items - before.items).toBe(200);
        expect(after.transactions - before.transactions).toBeLessThan(200);
        expect(after.transactions - before.transactions).toBeLessThanOrEqual(4);
        const count = await database.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('tenant_id', '=', tenant.id)
          .executeTakeFirstOrThrow();
        expect(Number(count.n)).toBe(200);
        expect(new Set(inserted.map((m) => m.id)).size).toBe(200);
        for (const m of inserted) expect(m).toMatchObject({ status: 'queued', attempts: 0, maxAttempts: 5 });
        expect(inserted.every((m) => m.shard >= 0 && m.shard < 1024)).toBe(true);
      });

      it('settles arriving together share one transaction, and each moves only under its own claim', async () => {
        const tenant = await newTenant();
        const inserted = await Promise.all([1, 2, 3].map((i) => repos.messages.insert(message(tenant.id, { recipient: `+86139000${i}` }))));
        const claimed = await repos.messages.claimMany(
          inserted.map((m) => m.id),
          { now: T0, leaseMs: 5000 },
        );
        expect(claimed).toHaveLength(3);
        const before = { ...repos.messages.groupCommitStats };
        // The third settles under a stale token: it must not move, and must not fail the others.
        const moved = await Promise.all(
          claimed.map((m, i) => repos.messages.markSent(m.id, { attempt: i === 2 ? m.attempts + 1 : m.attempts, now: T0 + 1 })),
        );
        expect(moved).toEqual([true, true, false]);
        const after = repos.messages.groupCommitStats;
        expect(after.fallbacks - before.fallbacks).toBe(0);
        expect(after.transactions - before.transactions).toBe(1);
      });

      it('a duplicate idempotency key in a batch fails only its own caller', async () => {
        const tenant = await newTenant();
        const first = await repos.messages.insert(message(tenant.id, { idempotencyKey: 'order-1', requestHash: 'h1' }));
        const before = { ...repos.messages.groupCommitStats };
        const results = await Promise.allSettled(
          Array.from({ length: 30 }, (_, i) =>
            repos.messages.insert(message(tenant.id, { idempotencyKey: i === 17 ? 'order-1' : `batch-${i}` })),
          ),
        );
        expect(repos.messages.groupCommitStats.fallbacks).toBeGreaterThan(before.fallbacks);
        const rejected = results.flatMap((r, i) => (r.status === 'rejected' ? [[i, r.reason] as const] : []));
        expect(rejected).toHaveLength(1);
        const [index, reason] = rejected[0]!;
        expect(index).toBe(17);
        expect(reason).toBeInstanceOf(DuplicateIdempotencyKeyError);
        expect(reason).toMatchObject({ idempotencyKey: 'order-1', tenantId: tenant.id, code: 'CONFLICT' });
        expect(await repos.messages.findByIdempotencyKey(tenant.id, 'order-1')).toMatchObject({ id: first.id, requestHash: 'h1' });
        expect(await repos.messages.findByIdempotencyKey(tenant.id, 'batch-3')).toBeDefined();

        // Two new rows with one key in the same batch: exactly one wins.
        const same = await Promise.allSettled([1, 2].map(() => repos.messages.insert(message(tenant.id, { idempotencyKey: 'twin' }))));
        expect(same.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
        // Keys are per tenant and case-sensitive (MySQL too).
        const other = await newTenant();
        await expect(repos.messages.insert(message(other.id, { idempotencyKey: 'order-1' }))).resolves.toBeDefined();
        await expect(repos.messages.insert(message(tenant.id, { idempotencyKey: 'ORDER-1' }))).resolves.toBeDefined();
      });

      it('isolates tenants', async () => {
        const owner = await newTenant();
        const stranger = await newTenant();
        const m = await repos.messages.insert(message(owner.id, { idempotencyKey: 'iso' }));
        expect((await repos.messages.findById(owner.id, m.id))?.payload).toEqual({ template: 'otp', params: { code: '1234' } });
        expect(await repos.messages.findById(stranger.id, m.id)).toBeUndefined();
        expect(await repos.messages.findByIdempotencyKey(stranger.id, 'iso')).toBeUndefined();
        expect(await repos.messages.cancel(stranger.id, m.id, T0)).toBe('not-found');
        expect((await repos.messages.get(m.id))?.status).toBe('queued');
      });

      it("searchByRecipient: the tenant's messages to one recipient, newest first, keyset-paged, filtered, through its index", async () => {
        const owner = await newTenant();
        const stranger = await newTenant();
        const to = '+8613811112222';
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          const channel = i === 2 ? 'webhook' : 'sms';
          ids.push((await repos.messages.insert(message(owner.id, { recipient: to, channel, now: T0 + i }))).id);
        }
        await repos.messages.insert(message(owner.id, { recipient: '+8613811113333', now: T0 + 9 }));
        await repos.messages.insert(message(stranger.id, { recipient: to, now: T0 + 9 }));
        const search = (extra: Partial<RecipientSearch> = {}) =>
          repos.messages
            .searchByRecipient({ tenantId: owner.id, recipient: to, limit: 10, ...extra })
            .then((found) => found.map((m) => m.id));
        expect(await search()).toEqual([...ids].reverse());
        expect(await search({ limit: 2 })).toEqual([ids[4], ids[3]]);
        expect(await search({ limit: 2, beforeId: ids[3] })).toEqual([ids[2], ids[1]]);
        expect(await search({ channel: 'sms' })).toEqual([ids[4], ids[3], ids[1], ids[0]]);
        expect(await repos.messages.cancel(owner.id, ids[1]!, T0)).toBe('canceled');
        expect(await search({ status: 'canceled' })).toEqual([ids[1]]);
        expect(await repos.messages.searchByRecipient({ tenantId: stranger.id, recipient: to, limit: 10 })).toHaveLength(1);
        // The page's statement, as the planner sees it: a range of the index, never a table scan.
        const page = (explain: string) =>
          sql.raw(
            `${explain} SELECT * FROM messages WHERE tenant_id = '${owner.id}' AND recipient = '${to}' AND id < '${ids[3]}' ORDER BY id DESC LIMIT 2`,
          );
        if (database.dialect === 'sqlite') {
          const plan = await page('EXPLAIN QUERY PLAN').execute(database.db);
          expect(JSON.stringify(plan.rows)).toMatch(/USING INDEX messages_tenant_recipient/);
        } else if (database.dialect === 'postgres') {
          // On a table this small 0009's index reads the tenant's few rows as cheaply: set it aside.
          const plan = await postgresPlan(database, page('EXPLAIN'), 'messages_tenant_id');
          expect(plan).toMatch(/Index Scan Backward using messages_tenant_recipient/);
        } else {
          // InnoDB costs a table of a few rows by its primary key; the index is among its choices.
          const plan = await page('EXPLAIN').execute(database.db);
          expect(plan.rows).toEqual([expect.objectContaining({ possible_keys: expect.stringContaining('messages_tenant_recipient') })]);
        }
      });

      it("listRecent: the tenant's messages to any recipient, newest first, keyset-paged, through its index", async () => {
        const owner = await newTenant();
        const stranger = await newTenant();
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) {
          const channel = i === 2 ? 'webhook' : 'sms';
          ids.push((await repos.messages.insert(message(owner.id, { recipient: `+86138111144${i}0`, channel, now: T0 + i }))).id);
        }
        await repos.messages.insert(message(stranger.id, { now: T0 + 9 }));
        const list = (extra: { beforeId?: string; limit?: number } = {}) =>
          repos.messages.listRecent({ tenantId: owner.id, limit: 10, ...extra }).then((found) => found.map((m) => m.id));
        expect(await list()).toEqual([...ids].reverse());
        expect(await list({ limit: 2 })).toEqual([ids[3], ids[2]]);
        expect(await list({ limit: 2, beforeId: ids[2] })).toEqual([ids[1], ids[0]]);
        expect(await repos.messages.listRecent({ tenantId: stranger.id, limit: 10 })).toHaveLength(1);
        const page = (explain: string) =>
          sql.raw(`${explain} SELECT * FROM messages WHERE tenant_id = '${owner.id}' AND id < '${ids[2]}' ORDER BY id DESC LIMIT 2`);
        if (database.dialect === 'sqlite') {
          const plan = await page('EXPLAIN QUERY PLAN').execute(database.db);
          expect(JSON.stringify(plan.rows)).toMatch(/USING (COVERING )?INDEX messages_tenant_id/);
        } else if (database.dialect === 'postgres') {
          expect(await postgresPlan(database, page('EXPLAIN'))).toMatch(/Index Scan Backward using messages_tenant_id/);
        } else {
          const plan = await page('EXPLAIN').execute(database.db);
          // Split: the unique key messages_tenant_idempotency_unique contains the name.
          expect(String((plan.rows[0] as { possible_keys?: string }).possible_keys).split(',')).toContain('messages_tenant_id');
        }
      });

      it('moves status only forward, fenced by the claim', async () => {
        const tenant = await newTenant();
        const scheduled = await repos.messages.insert(message(tenant.id, { dueAt: T0 + 60_000 }));
        expect(scheduled.status).toBe('scheduled');
        expect(await repos.messages.claim(scheduled.id, { now: T0, leaseMs: 5000 })).toBeUndefined();

        const m = await repos.messages.insert(message(tenant.id));
        const claimed = await repos.messages.claim(m.id, { now: T0 + 1, leaseMs: 5000, providerId: 'p1' });
        expect(claimed).toMatchObject({ status: 'sending', attempts: 1, leaseUntil: T0 + 5001, providerId: 'p1' });
        expect(await repos.messages.claim(m.id, { now: T0 + 2, leaseMs: 5000 })).toBeUndefined(); // lease held
        expect(await repos.messages.cancel(tenant.id, m.id, T0 + 3)).toBe('too-late');
        // A lease is extended only for a claim still holding its token; a queued row is no claim.
        const queued = await repos.messages.insert(message(tenant.id));
        const extend = { now: T0 + 4000, leaseMs: 5000 };
        expect(await repos.messages.extendLeases([{ id: m.id, attempt: 2 }], extend)).toBe(0);
        expect(
          await repos.messages.extendLeases(
            [
              { id: m.id, attempt: 1 },
              { id: queued.id, attempt: 0 },
            ],
            extend,
          ),
        ).toBe(1);
        expect(await repos.messages.get(m.id)).toMatchObject({ status: 'sending', leaseUntil: T0 + 9000 });
        expect(await repos.messages.get(queued.id)).toMatchObject({ status: 'queued', leaseUntil: null });
        expect(await repos.messages.markSent(m.id, { attempt: 2, now: T0 + 5 })).toBe(false); // not this claim
        expect(
          await repos.messages.markSent(m.id, {
            attempt: 1,
            now: T0 + 6,
            providerMessageId: 'vendor-1',
            record: {
              attemptNo: 1,
              providerId: 'p1',
              startedAt: T0 + 1,
              finishedAt: T0 + 6,
              outcome: 'sent',
              providerMessageId: 'vendor-1',
            },
          }),
        ).toBe(true);
        const sent = await repos.messages.findById(tenant.id, m.id);
        expect(sent).toMatchObject({ status: 'sent', sentAt: T0 + 6, providerMessageId: 'vendor-1', leaseUntil: null });
        // Nothing moves a sent message.
        expect(await repos.messages.markRetry(m.id, { attempt: 1, now: T0 + 7, dueAt: T0 + 8, error: 'x' })).toBe(false);
        expect(await repos.messages.markFailed(m.id, { attempt: 1, now: T0 + 7, error: 'x' })).toBe(false);
        expect(await repos.messages.claim(m.id, { now: T0 + 100_000, leaseMs: 5000 })).toBeUndefined();
        expect(await repos.messages.cancel(tenant.id, m.id, T0 + 9)).toBe('too-late');
        expect(await repos.messages.listAttempts(m.id)).toMatchObject([{ attemptNo: 1, outcome: 'sent', providerMessageId: 'vendor-1' }]);
      });

      it('a released claim is queued again, due now, with its attempt given back, and only by its own token', async () => {
        const tenant = await newTenant();
        const m = await repos.messages.insert(message(tenant.id));
        const claimed = await repos.messages.claim(m.id, { now: T0, leaseMs: 1000 });
        expect(claimed?.attempts).toBe(1);
        expect(await repos.messages.release(m.id, { attempt: 2, now: T0 + 5 })).toBe(false); // not this claim
        expect(await repos.messages.release(m.id, { attempt: 1, now: T0 + 5 })).toBe(true);
        expect(await repos.messages.get(m.id)).toMatchObject({ status: 'queued', dueAt: T0 + 5, attempts: 0, leaseUntil: null });
        expect(await repos.messages.release(m.id, { attempt: 1, now: T0 + 6 })).toBe(false); // released already
        expect(await repos.messages.listAttempts(m.id)).toEqual([]);
        expect((await repos.messages.claim(m.id, { now: T0 + 5, leaseMs: 1000 }))?.attempts).toBe(1);
        // Released together: one batched statement (a CASE per column), each row its own values.
        const other = await repos.messages.insert(message(tenant.id));
        await repos.messages.claim(other.id, { now: T0 + 5, leaseMs: 1000 });
        expect(
          await Promise.all([
            repos.messages.release(m.id, { attempt: 1, now: T0 + 7 }),
            repos.messages.release(other.id, { attempt: 1, now: T0 + 8 }),
          ]),
        ).toEqual([true, true]);
        expect(await repos.messages.get(m.id)).toMatchObject({ status: 'queued', dueAt: T0 + 7, attempts: 0 });
        expect(await repos.messages.get(other.id)).toMatchObject({ status: 'queued', dueAt: T0 + 8, attempts: 0 });
      });

      it('retries, then fails; a failed settle records no attempt', async () => {
        const tenant = await newTenant();
        const m = await repos.messages.insert(message(tenant.id));
        const first = await repos.messages.claim(m.id, { now: T0, leaseMs: 1000 });
        expect(
          await repos.messages.markRetry(m.id, {
            attempt: first!.attempts,
            now: T0 + 10,
            dueAt: T0 + 2000,
            error: 'timeout',
            record: { attemptNo: 1, startedAt: T0, finishedAt: T0 + 10, outcome: 'retryable', error: 'timeout' },
          }),
        ).toBe(true);
        expect(await repos.messages.get(m.id)).toMatchObject({
          status: 'scheduled',
          dueAt: T0 + 2000,
          lastError: 'timeout',
          leaseUntil: null,
        });
        expect(await repos.messages.claim(m.id, { now: T0 + 1999, leaseMs: 1000 })).toBeUndefined();
        const second = await repos.messages.claim(m.id, { now: T0 + 2000, leaseMs: 1000 });
        expect(second?.attempts).toBe(2);
        // A stale settle with an attempt row: neither moves nor records.
        expect(
          await repos.messages.markFailed(m.id, {
            attempt: 1,
            now: T0 + 2001,
            error: 'stale',
            record: { attemptNo: 1, startedAt: T0, finishedAt: T0 + 2001, outcome: 'permanent' },
          }),
        ).toBe(false);
        expect(await repos.messages.markFailed(m.id, { attempt: 2, now: T0 + 2002, error: 'rejected by vendor' })).toBe(true);
        await repos.messages.recordAttempt({
          messageId: m.id,
          attemptNo: 2,
          providerId: 'p',
          startedAt: T0 + 2000,
          finishedAt: T0 + 2002,
          outcome: 'permanent',
          error: 'rejected by vendor',
        });
        expect(await repos.messages.get(m.id)).toMatchObject({ status: 'failed', lastError: 'rejected by vendor' });
        expect((await repos.messages.listAttempts(m.id)).map((a) => [a.attemptNo, a.outcome])).toEqual([
          [1, 'retryable'],
          [2, 'permanent'],
        ]);
      });

      it('cancels scheduled messages, idempotently; not after they start', async () => {
        const tenant = await newTenant();
        const m = await repos.messages.insert(message(tenant.id, { dueAt: T0 + 3_600_000 }));
        expect(await repos.messages.cancel(tenant.id, m.id, T0 + 1)).toBe('canceled');
        expect(await repos.messages.cancel(tenant.id, m.id, T0 + 2)).toBe('canceled');
        expect(await repos.messages.claim(m.id, { now: T0 + 3_600_000, leaseMs: 1000 })).toBeUndefined();
        expect((await repos.messages.get(m.id))?.status).toBe('canceled');
        expect(await repos.messages.cancel(tenant.id, 'no-such-id', T0)).toBe('not-found');
      });

      it('claimDue: concurrent claimers never get the same message', async () => {
        await emptyQueue();
        const tenant = await newTenant();
        await Promise.all(Array.from({ length: 60 }, (_, i) => repos.messages.insert(message(tenant.id, { dueAt: T0 - i }))));
        await repos.messages.insert(message(tenant.id, { dueAt: T0 + 1 })); // not yet due
        await repos.messages.insert(message(tenant.id, { channel: 'email', recipient: 'a@b.c' })); // other channel
        const seen: string[] = [];
        for (let round = 0; round < 10; round++) {
          const batches = await Promise.all(
            [0, 1, 2, 3].map(() =>
              repos.messages.claimDue({ channel: 'sms', partition: 0, partitions: 1, now: T0, limit: 7, leaseMs: 30_000 }),
            ),
          );
          for (const batch of batches) seen.push(...batch.map((m) => m.id));
          if (batches.every((b) => b.length === 0)) break;
        }
        expect(seen).toHaveLength(60);
        expect(new Set(seen).size).toBe(60);
        expect(
          await repos.messages.claimDue({ channel: 'sms', partition: 0, partitions: 1, now: T0, limit: 100, leaseMs: 30_000 }),
        ).toEqual([]);
      });

      it('claimDue: oldest due first, partitions split the shards, an expired lease is reclaimed', async () => {
        await emptyQueue();
        const tenant = await newTenant();
        const ms: Message[] = await Promise.all(
          Array.from({ length: 40 }, (_, i) => repos.messages.insert(message(tenant.id, { dueAt: T0 - 1000 + i }))),
        );
        const oldest = await repos.messages.claimDue({ channel: 'sms', partition: 0, partitions: 1, now: T0, limit: 3, leaseMs: 1000 });
        expect(oldest.map((m) => m.id)).toEqual(ms.slice(0, 3).map((m) => m.id));
        expect(oldest.every((m) => m.status === 'sending' && m.attempts === 1 && m.leaseUntil === T0 + 1000)).toBe(true);

        const byPartition = await Promise.all(
          [0, 1, 2, 3].map((partition) =>
            repos.messages.claimDue({ channel: 'sms', partition, partitions: 4, now: T0, limit: 100, leaseMs: 1000 }),
          ),
        );
        byPartition.forEach((batch, partition) => {
          for (const m of batch) expect(m.shard % 4).toBe(partition);
        });
        expect(byPartition.flat()).toHaveLength(37);

        // Leases of all 40 end at T0 + 1000: before that nothing, after it every one comes back.
        expect(
          await repos.messages.claimDue({ channel: 'sms', partition: 0, partitions: 1, now: T0 + 999, limit: 100, leaseMs: 1000 }),
        ).toEqual([]);
        const reclaimed = await repos.messages.claimDue({
          channel: 'sms',
          partition: 0,
          partitions: 1,
          now: T0 + 1001,
          limit: 100,
          leaseMs: 1000,
        });
        expect(reclaimed).toHaveLength(40);
        expect(reclaimed.every((m) => m.attempts === 2)).toBe(true);
        // The first worker wakes up late: its outcome no longer counts.
        expect(await repos.messages.markSent(ms[0]!.id, { attempt: 1, now: T0 + 1002 })).toBe(false);
        expect(await repos.messages.markSent(ms[0]!.id, { attempt: 2, now: T0 + 1002 })).toBe(true);
        await expect(
          repos.messages.claimDue({ channel: 'sms', partition: 4, partitions: 4, now: T0, limit: 1, leaseMs: 1 }),
        ).rejects.toThrow(RangeError);
      });

      it('nextDueAt: the earliest queued or scheduled due time up to a limit, per partition', async () => {
        await emptyQueue();
        const tenant = await newTenant();
        const selector = { channel: 'sms' as const, partition: 0, partitions: 1 };
        expect(await repos.messages.nextDueAt({ ...selector, until: T0 + 10_000 })).toBeUndefined();
        const scheduled = await repos.messages.insert(message(tenant.id, { now: T0, dueAt: T0 + 700 }));
        const queued = await repos.messages.insert(message(tenant.id, { now: T0 + 900, dueAt: T0 + 900 }));
        expect(await repos.messages.nextDueAt({ ...selector, until: T0 + 10_000 })).toBe(T0 + 700);
        expect(await repos.messages.nextDueAt({ ...selector, until: T0 + 699 })).toBeUndefined();
        // Only what can still be claimed counts: once the earlier one is sending, the later one is next.
        expect((await repos.messages.claim(scheduled.id, { now: T0 + 700, leaseMs: 1000 }))?.id).toBe(scheduled.id);
        expect(await repos.messages.nextDueAt({ ...selector, until: T0 + 10_000 })).toBe(T0 + 900);
        // Another partition's shards are not this partition's business.
        const other = (queued.shard % 2) ^ 1;
        expect(await repos.messages.nextDueAt({ channel: 'sms', partition: other, partitions: 2, until: T0 + 10_000 })).toBeUndefined();
        expect(await repos.messages.nextDueAt({ ...selector, channel: 'email', until: T0 + 10_000 })).toBeUndefined();
      });

      it("a suspended tenant's messages keep their status and no claim or due query sees them until it is active again", async () => {
        await emptyQueue();
        const held = await newTenant();
        const other = await newTenant();
        const heldQueued = await repos.messages.insert(message(held.id, { dueAt: T0 - 2000 }));
        const heldScheduled = await repos.messages.insert(message(held.id, { now: T0 - 5000, dueAt: T0 - 1000 }));
        const heldLeased = await repos.messages.insert(message(held.id, { dueAt: T0 - 3000 }));
        await repos.messages.claim(heldLeased.id, { now: T0 - 3000, leaseMs: 100 }); // its sender died: lease expired
        const mine = await repos.messages.insert(message(other.id, { dueAt: T0 }));
        await repos.tenants.update(held.id, { status: 'suspended' });
        expect(await repos.tenants.suspendedIds()).toContain(held.id);

        const selector = { channel: 'sms' as const, partition: 0, partitions: 1 };
        expect(await repos.messages.nextDueAt({ ...selector, until: T0 + 10_000 })).toBe(T0);
        expect((await repos.messages.listDueIds({ ...selector, untilMs: T0 + 10_000, limit: 100 })).map((m) => m.id)).toEqual([mine.id]);
        // The held ones are due first; a claim of one still gets the other tenant's.
        const claimed = await repos.messages.claimDue({ ...selector, now: T0, limit: 1, leaseMs: 1000 });
        expect(claimed.map((m) => m.id)).toEqual([mine.id]);
        // The Redis path: ids from the index are refused, whatever their status.
        expect(await repos.messages.claimMany([heldQueued.id, heldScheduled.id, heldLeased.id], { now: T0, leaseMs: 1000 })).toEqual([]);
        const kept = await Promise.all([heldQueued, heldScheduled, heldLeased].map((m) => repos.messages.get(m.id)));
        expect(kept.map((m) => [m?.status, m?.attempts])).toEqual([
          ['queued', 0],
          ['scheduled', 0],
          ['sending', 1],
        ]);

        await repos.tenants.update(held.id, { status: 'active' });
        expect(await repos.tenants.suspendedIds()).not.toContain(held.id);
        expect(await repos.messages.nextDueAt({ ...selector, until: T0 + 10_000 })).toBe(T0 - 2000);
        expect((await repos.messages.listDueIds({ ...selector, untilMs: T0 + 10_000, limit: 100 })).length).toBe(4); // and the other's lease
        const resumed = await repos.messages.claimDue({ ...selector, now: T0, limit: 10, leaseMs: 1000 });
        expect(resumed.map((m) => m.id).sort()).toEqual([heldQueued.id, heldScheduled.id, heldLeased.id].sort());
      });

      it('a lease that expires on the last attempt fails the message instead of exceeding maxAttempts', async () => {
        await emptyQueue();
        const tenant = await newTenant();
        const m = await repos.messages.insert(message(tenant.id, { maxAttempts: 1 }));
        expect((await repos.messages.claim(m.id, { now: T0, leaseMs: 100 }))?.attempts).toBe(1);
        expect(
          await repos.messages.claimDue({ channel: 'sms', partition: 0, partitions: 1, now: T0 + 101, limit: 10, leaseMs: 100 }),
        ).toEqual([]);
        expect(await repos.messages.get(m.id)).toMatchObject({ status: 'failed', lastError: expect.stringMatching(/lease expired/) });
      });

      it('purgeFinished deletes finished messages older than the cutoff with their attempts, in batches, and nothing else', async () => {
        const tenant = await newTenant();
        // Long before every other test's messages: the purge is not per tenant, and they share the database.
        const B = T0 - 100_000_000;
        const sentOld = async (at: number) => {
          const m = await repos.messages.insert(message(tenant.id, { dueAt: at }));
          await repos.messages.claim(m.id, { now: at, leaseMs: 1000 });
          const record = { attemptNo: 1, providerId: 'p1', startedAt: at, finishedAt: at, outcome: 'sent' as const };
          await repos.messages.markSent(m.id, { attempt: 1, now: at, record });
          return m.id;
        };
        const old = [await sentOld(B - 10_000), await sentOld(B - 9000), await sentOld(B - 8000)];
        const recent = await sentOld(B + 10);
        // Due long ago, but retried and sent only now: retention counts from its last change.
        const lateSend = await repos.messages.insert(message(tenant.id, { dueAt: B - 20_000 }));
        await repos.messages.claim(lateSend.id, { now: B + 20, leaseMs: 1000 });
        await repos.messages.markSent(lateSend.id, { attempt: 1, now: B + 20 });
        const canceled = await repos.messages.insert(message(tenant.id, { dueAt: B - 7000 }));
        expect(await repos.messages.cancel(tenant.id, canceled.id, B - 6000)).toBe('canceled');
        const open = await repos.messages.insert(message(tenant.id, { dueAt: B - 5000 })); // queued, overdue: kept

        expect(await repos.messages.purgeFinished({ before: B, limit: 2 })).toBe(2);
        expect(await repos.messages.purgeFinished({ before: B, limit: 2 })).toBe(2);
        expect(await repos.messages.purgeFinished({ before: B, limit: 2 })).toBe(0);
        for (const id of [...old, canceled.id]) {
          expect(await repos.messages.findById(tenant.id, id)).toBeUndefined();
          expect(await repos.messages.listAttempts(id)).toEqual([]);
        }
        expect((await repos.messages.findById(tenant.id, recent))?.status).toBe('sent');
        expect(await repos.messages.listAttempts(recent)).toHaveLength(1);
        expect((await repos.messages.findById(tenant.id, open.id))?.status).toBe('queued');
        expect((await repos.messages.findById(tenant.id, lateSend.id))?.status).toBe('sent');
      });

      it('listDueIds pages what a Redis due index needs; countOpen counts the unfinished', async () => {
        await emptyQueue();
        const tenant = await newTenant();
        const due = await repos.messages.insert(message(tenant.id));
        const soon = await repos.messages.insert(message(tenant.id, { dueAt: T0 + 5000 }));
        await repos.messages.insert(message(tenant.id, { dueAt: T0 + 999_999 })); // beyond the horizon
        const leased = await repos.messages.insert(message(tenant.id));
        await repos.messages.claim(leased.id, { now: T0, leaseMs: 3000 });
        const done = await repos.messages.insert(message(tenant.id));
        await repos.messages.claim(done.id, { now: T0, leaseMs: 3000 });
        await repos.messages.markSent(done.id, { attempt: 1, now: T0 });
        await repos.messages.insert(message(tenant.id, { channel: 'email', recipient: 'x@y.z' }));

        const selector = { channel: 'sms' as const, partition: 0, partitions: 1, untilMs: T0 + 10_000 };
        const all = await repos.messages.listDueIds({ ...selector, limit: 100 });
        const expected = [
          { id: due.id, tenantId: tenant.id, dueAt: T0 },
          { id: soon.id, tenantId: tenant.id, dueAt: T0 + 5000 },
          { id: leased.id, tenantId: tenant.id, dueAt: T0 + 3000 },
        ].sort((a, b) => (a.id < b.id ? -1 : 1));
        expect(all).toEqual(expected);
        const page1 = await repos.messages.listDueIds({ ...selector, limit: 2 });
        const page2 = await repos.messages.listDueIds({ ...selector, limit: 2, afterId: page1.at(-1)!.id });
        expect([...page1, ...page2]).toEqual(expected);

        const counts = await repos.messages.countOpen();
        const count = (channel: string, status: string) => counts.find((c) => c.channel === channel && c.status === status)?.count;
        expect(count('sms', 'queued')).toBe(1);
        expect(count('sms', 'scheduled')).toBe(2);
        expect(count('sms', 'sending')).toBe(1);
        expect(count('sms', 'sent')).toBeUndefined(); // finished: counted by sluice_sends_total, not per scrape
        expect(count('email', 'queued')).toBe(1);
        expect(typeof counts[0]?.count).toBe('number');
      });
    });
  });
}

/**
 * PostgreSQL's plan of `explain`, with the table read whole and the sort forbidden: on a table this
 * small the planner's pick among those otherwise varies with the stats of the moment, and an
 * index that serves the page in its order is what the test looks for. `setAside`: an index
 * dropped for the plan only (the transaction is rolled back).
 */
async function postgresPlan(database: Database, explain: RawBuilder<unknown>, setAside?: string): Promise<string> {
  let plan = '';
  await database.db
    .transaction()
    .execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      await sql`SET LOCAL enable_sort = off`.execute(trx);
      await sql`SET LOCAL enable_bitmapscan = off`.execute(trx);
      if (setAside) await sql`DROP INDEX ${sql.ref(setAside)}`.execute(trx);
      plan = JSON.stringify((await explain.execute(trx)).rows);
      throw ROLLBACK;
    })
    .catch((error: unknown) => {
      if (error !== ROLLBACK) throw error;
    });
  return plan;
}

const ROLLBACK = new Error('rolled back on purpose');

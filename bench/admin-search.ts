/**
 * The admin search by recipient (`GET /v1/admin/tenants/:id/messages?to=`) on a large table: one
 * page (51 rows asked, as the service does for a page of 50) of one tenant's messages to one
 * recipient, with migration 0008's index and without it; and one page of a tenant's recent
 * messages (no `to`), with migration 0009's index and without it, for a busy tenant and for a
 * quiet one whose 60 messages are the oldest of the table. SQLite (synchronous=NORMAL for the load),
 * `BENCH_SEARCH_MESSAGES` rows (default 500,000) over 50 tenants and 100,000 recipients.
 * `npx tsx bench/run.ts admin-search`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createRepositories, migrateToLatest, openDatabase } from '../src/storage/index.js';
import type { Benchmark } from './support/benchmark.js';

export const benchmark: Benchmark = {
  name: 'admin-search',
  title: 'Admin search by recipient',
  async run(context) {
    const total = Number(process.env.BENCH_SEARCH_MESSAGES ?? 500_000);
    context.progress(`loading ${total} messages`);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-search-'));
    const database = await openDatabase(`sqlite:${join(dir, 'db.sqlite')}`, { sqliteSynchronous: 'normal' });
    await migrateToLatest(database);
    const repos = createRepositories(database);
    const recipient = (n: number) => `+86138${String(n % 100_000).padStart(8, '0')}`;

    await database.db.transaction().execute(async (trx) => {
      let rows: Record<string, unknown>[] = [];
      for (let i = 0; i < total; i++) {
        rows.push({
          id: `01${String(i).padStart(24, '0')}`,
          // The first 60 messages are the quiet tenant's: the oldest of the table.
          tenant_id: i < 60 ? 'quiet' : `t${i % 50}`,
          channel: 'sms',
          recipient: recipient(i),
          payload: '{}',
          status: 'sent',
          due_at: i,
          attempts: 1,
          max_attempts: 5,
          shard: i % 1024,
          created_at: i,
          updated_at: i,
          priority: 0,
        });
        if (rows.length === 500) {
          await trx
            .insertInto('messages')
            .values(rows as never)
            .execute();
          rows = [];
        }
      }
    });

    async function pageMs(): Promise<number> {
      const runs = 200;
      const started = performance.now();
      // Tenant t7 holds the recipients 7, 57, 107…: each search finds its rows.
      for (let i = 0; i < runs; i++) {
        await repos.messages.searchByRecipient({ tenantId: 't7', recipient: recipient(7 + 50 * (i % 100)), limit: 51 });
      }
      return (performance.now() - started) / runs;
    }

    async function recentMs(tenantId: string): Promise<number> {
      const runs = 20;
      const started = performance.now();
      for (let i = 0; i < runs; i++) await repos.messages.listRecent({ tenantId, limit: 51 });
      return (performance.now() - started) / runs;
    }

    const indexed = await pageMs();
    const recent = { busy: await recentMs('t7'), quiet: await recentMs('quiet') };
    await sql`DROP INDEX messages_tenant_recipient`.execute(database.db);
    const scanned = await pageMs();
    await sql`DROP INDEX messages_tenant_id`.execute(database.db);
    const recentScanned = { busy: await recentMs('t7'), quiet: await recentMs('quiet') };
    await repos.close();
    rmSync(dir, { recursive: true, force: true });
    return [
      `${total} messages of 50 tenants in SQLite; one page (51 rows asked) of one tenant's messages to one recipient, mean of 200:`,
      '',
      '| index | ms per page |',
      '| --- | --- |',
      `| messages_tenant_recipient (0008) | ${indexed.toFixed(3)} |`,
      `| none (the tenant's rows) | ${scanned.toFixed(1)} |`,
      '',
      "One page (51 rows asked) of a tenant's recent messages, without `to`, mean of 20:",
      '',
      '| index | busy tenant (t7), ms per page | quiet tenant (its 60 messages the oldest), ms per page |',
      '| --- | --- | --- |',
      `| messages_tenant_id (0009) | ${recent.busy.toFixed(3)} | ${recent.quiet.toFixed(3)} |`,
      `| none (the tenant's rows, then a sort) | ${recentScanned.busy.toFixed(1)} | ${recentScanned.quiet.toFixed(3)} |`,
    ].join('\n');
  },
};

/**
 * The admin search by recipient (`GET /v1/admin/tenants/:id/messages?to=`) on a large table: one
 * page (51 rows asked, as the service does for a page of 50) of one tenant's messages to one
 * recipient, with migration 0008's index and without it. SQLite (synchronous=NORMAL for the load),
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
          tenant_id: `t${i % 50}`,
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

    const indexed = await pageMs();
    await sql`DROP INDEX messages_tenant_recipient`.execute(database.db);
    const scanned = await pageMs();
    await repos.close();
    rmSync(dir, { recursive: true, force: true });
    return [
      `${total} messages of 50 tenants in SQLite; one page (51 rows asked) of one tenant's messages to one recipient, mean of 200:`,
      '',
      '| index | ms per page |',
      '| --- | --- |',
      `| messages_tenant_recipient (0008) | ${indexed.toFixed(3)} |`,
      `| none (the tenant's rows) | ${scanned.toFixed(1)} |`,
    ].join('\n');
  },
};

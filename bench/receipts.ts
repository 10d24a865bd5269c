/**
 * One vendor push of delivery receipts (`POST /v1/receipts/:providerId`, Aliyun's SmsReport
 * format, through the real HTTP app) on SQLite (synchronous=FULL, a temp file) and, when
 * `BENCH_PG_URL` (else `SLUICE_TEST_PG_URL`) names a PostgreSQL server, on a fresh database of it.
 * Three pushes of `BENCH_RECEIPTS` (default 10,500) each, on a fresh database per backend:
 * receipts for ids no message has (each waits in `pending_receipts`), the same push again (every
 * one a duplicate), and receipts for as many `sent` messages (each moves its message).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { buildHttpApp } from '../src/http/app.js';
import { createRuntime } from '../src/main/runtime.js';
import { loadSettings } from '../src/settings/settings.js';
import type { Benchmark } from './support/benchmark.js';
import { positiveEnv } from './support/sends.js';
import { formatCount, markdownTable } from './support/table.js';

const ADMIN = 'bench-admin';

interface Row {
  backend: string;
  push: string;
  ms: number;
}

const reports = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    biz_id: `${prefix}-${i}`,
    success: i % 3 !== 0,
    err_code: i % 3 !== 0 ? 'DELIVERED' : 'MK:0001',
    report_time: '2026-12-01 23:00:03',
  }));

async function runOn(backend: string, url: string, count: number, progress: (line: string) => void): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-receipts-'));
  const runtime = await createRuntime(
    loadSettings(
      {
        SLUICE_DB_URL: url,
        SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
        SLUICE_ADMIN_TOKEN: ADMIN,
        SLUICE_LOG_LEVEL: 'silent',
        SLUICE_BODY_LIMIT_BYTES: String(10 * 1024 * 1024),
      },
      undefined,
    ),
  );
  const app = await buildHttpApp(runtime.http);
  try {
    const tenant = await runtime.http.tenants.createTenant(`bench-receipts-${backend}`);
    const provider = await runtime.repositories.providers.create({
      scope: tenant.id,
      channel: 'sms',
      kind: 'aliyun-sms',
      name: 'aliyun',
      qps: 10,
      config: {},
    });
    const issued = await app.inject({
      method: 'POST',
      url: `/v1/admin/providers/${provider.id}/receipt-token`,
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const { path } = issued.json() as { path: string };
    const push = async (name: string, body: unknown[]): Promise<Row> => {
      progress(`${backend}: ${name}`);
      const started = performance.now();
      const answer = await app.inject({ method: 'POST', url: path, payload: body });
      const ms = performance.now() - started;
      if (answer.statusCode !== 200) throw new Error(`${backend} ${name}: ${answer.statusCode} ${answer.body}`);
      return { backend, push: name, ms };
    };
    const rows = [
      await push('unmatched (each waits)', reports('u', count)),
      await push('the same again (duplicates)', reports('u', count)),
    ];

    progress(`${backend}: ${count} sent messages`);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const message = await runtime.repositories.messages.insert({
        tenantId: tenant.id,
        channel: 'sms',
        recipient: '+8613800000000',
        payload: { template: 'x' },
        now: Date.now(),
      });
      ids.push(message.id);
    }
    await runtime.database.db.transaction().execute(async (trx) => {
      for (const [i, id] of ids.entries())
        await trx
          .updateTable('messages')
          .set({ status: 'sent', provider_id: provider.id, provider_message_id: `m-${i}`, sent_at: Date.now() })
          .where('id', '=', id)
          .execute();
    });
    rows.push(await push('matched (each moves its message)', reports('m', count)));
    return rows;
  } finally {
    await app.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  name: 'receipts',
  title: 'Delivery receipts: one push',
  async run(context) {
    const count = positiveEnv('BENCH_RECEIPTS', 10_500);
    const rows: Row[] = [];
    const sqliteDir = mkdtempSync(join(tmpdir(), 'sluice-bench-receipts-db-'));
    try {
      rows.push(...(await runOn('SQLite (FULL)', `sqlite:${join(sqliteDir, 'sluice.db')}`, count, context.progress)));
    } finally {
      rmSync(sqliteDir, { recursive: true, force: true });
    }
    const pgUrl = process.env.BENCH_PG_URL || process.env.SLUICE_TEST_PG_URL;
    if (pgUrl) {
      const name = `sluice_bench_receipts_${process.pid}`;
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      try {
        const url = new URL(pgUrl);
        url.pathname = `/${name}`;
        rows.push(...(await runOn('PostgreSQL 15', url.toString(), count, context.progress)));
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    }
    return markdownTable(
      [
        { header: 'backend' },
        { header: `push of ${formatCount(count)}` },
        { header: 'time', align: 'right' },
        { header: 'receipts/s', align: 'right' },
      ],
      rows.map((row) => [row.backend, row.push, `${(row.ms / 1000).toFixed(2)} s`, formatCount(Math.round((count * 1000) / row.ms))]),
    );
  },
};

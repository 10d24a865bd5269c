/**
 * Fault drill 3 (docs/degradation.md "Measured", docs/errors.md UNAVAILABLE): the database goes away
 * under steady load. A private PostgreSQL (its own initdb, its own port) holds sluice's data; no
 * Redis, so the limiter is in process. `pg_ctl stop -m fast` while ~100 sends/s arrive: every send
 * must be answered quickly with 503 UNAVAILABLE (never 500, never a hang), nothing half-written
 * (the rows are exactly the messages answered 202), and after `pg_ctl start` on the same port and
 * data directory the same sluice process accepts again within a few seconds, without a restart.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { describeWith } from '../support/servers.js';
import {
  createTenant,
  FaultyPostgres,
  LoadLoop,
  ms,
  now,
  percentile,
  pgBin,
  type Service,
  sleep,
  startService,
  statusCounts,
  tempDir,
} from './fault-support.js';

const RATE = 100;

describeWith(pgBin, 'PostgreSQL 15 binaries (/usr/lib/postgresql/15/bin)', 'fault: database down under load', () => {
  const temp = tempDir('sluice-fault-db-down-');
  let postgres: FaultyPostgres;
  let service: Service;

  beforeAll(async () => {
    postgres = await FaultyPostgres.create(pgBin as string, temp.dir);
    service = await startService({
      SLUICE_DB_URL: postgres.url,
      SLUICE_SECRET_KEY_FILE: `${temp.dir}/secret.key`,
      SLUICE_REDIS_URL: '',
      SLUICE_REDIS_CLUSTER_NODES: '',
      SLUICE_ADMIN_TOKEN: 'fault-admin',
    });
  });

  afterAll(async () => {
    await service?.stop();
    await postgres?.destroy();
    temp.cleanup();
  });

  it('answers 503 UNAVAILABLE quickly while PostgreSQL is down, writes nothing half, and recovers without a restart', async () => {
    onTestFailed(() => console.log(`sluice log tail:\n${service.logTail(60)}`));
    const tenant = await createTenant(service.base, 'fault-admin');
    const load = new LoadLoop(service.base, tenant.apiKey, RATE, RATE * 40);
    let stopAt = 0;
    let stoppedAt = 0;
    let startAt = 0;
    let startedAt = 0;
    let recoveredAt: number | undefined;
    try {
      await sleep(2000); // steady state
      stopAt = now();
      await postgres.stop('fast');
      stoppedAt = now();
      await sleep(3000);

      startAt = now();
      await postgres.start();
      startedAt = now();
      // The same process must accept again: wait for a 202 to a request sent after the restart.
      for (let i = 0; i < 200 && recoveredAt === undefined; i++) {
        await sleep(50);
        recoveredAt = load.samples.find((sample) => sample.sentAt >= startedAt && sample.status === 202)?.doneAt;
      }
      await sleep(1000); // steady again
    } finally {
      await load.stop();
    }
    const samples = load.samples;

    const latency = samples.map((sample) => sample.doneAt - sample.sentAt);
    // Sent and answered while the database was down (one sent just before the restart may be answered after it).
    const outage = samples.filter((sample) => sample.sentAt >= stoppedAt && sample.doneAt < startAt);
    const outageLatency = outage.map((sample) => sample.doneAt - sample.sentAt);
    const firstUnavailable = samples.find((sample) => sample.sentAt >= stopAt && sample.status === 503);
    const counts = statusCounts(samples);
    const codes = [...new Set(samples.filter((sample) => sample.status >= 400).map((sample) => `${sample.status} ${sample.code}`))];
    const accepted = samples.filter((sample) => sample.status === 202).map((sample) => sample.id!);

    // Nothing half-written: the tenant's rows are exactly the messages answered 202.
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    let rows: Set<string>;
    try {
      const result = await client.query<{ id: string }>('SELECT id FROM messages WHERE tenant_id = $1', [tenant.id]);
      rows = new Set(result.rows.map((row) => row.id));
    } finally {
      await client.end();
    }
    const lost = accepted.filter((id) => !rows.has(id));

    console.log(
      `[fault db-down] ${samples.length} requests at ${RATE}/s, statuses ${JSON.stringify(counts)} (${codes.join(', ')}); ` +
        `pg_ctl stop -m fast took ${ms(stoppedAt - stopAt)}, first 503 after ${ms(firstUnavailable && firstUnavailable.doneAt - stopAt)}; ` +
        `while down: ${outage.length} requests, ${outage.filter((s) => s.status === 503).length} × 503, latency p50 ${ms(percentile(outageLatency, 50))} ` +
        `p99 ${ms(percentile(outageLatency, 99))} max ${ms(Math.max(...outageLatency))}; slowest answer overall ${ms(Math.max(...latency))}; ` +
        `rows ${rows.size} = 202s ${accepted.length}, lost ${lost.length}; pg_ctl start took ${ms(startedAt - startAt)}, ` +
        `first 202 after ready: ${ms(recoveredAt && recoveredAt - startedAt)} (after the start command: ${ms(recoveredAt && recoveredAt - startAt)})`,
    );

    expect(samples.filter((sample) => sample.status === 0)).toEqual([]); // every request answered
    expect(samples.filter((sample) => sample.status >= 500 && sample.status !== 503)).toEqual([]);
    expect(samples.filter((sample) => sample.status === 503 && sample.code !== 'UNAVAILABLE')).toEqual([]);
    expect(outage.length).toBeGreaterThan(RATE * 2);
    expect(outage.every((sample) => sample.status === 503)).toBe(true);
    expect(Math.max(...latency)).toBeLessThan(5000); // not a hang
    expect(lost).toEqual([]);
    expect(rows.size).toBe(accepted.length); // no row for a request answered 503
    expect(recoveredAt).toBeDefined();
    expect((recoveredAt ?? Number.POSITIVE_INFINITY) - startedAt).toBeLessThan(5000);
  }, 60_000);
});

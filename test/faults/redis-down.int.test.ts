/**
 * Fault drill 1 (DESIGN.md §7, docs/degradation.md "Measured"): Redis dies under steady load.
 * A private redis-server is SIGKILLed while a sluice child process takes ~100 sends/s; decisions
 * must go on in the `local` fallback within 1 s with no 5xx, every message answered 202 must be in
 * the database, /metrics and /readyz must show the open breaker, and once Redis is back on the
 * same port decisions must return to it within a few seconds.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { describeWith } from '../support/servers.js';
import {
  createTenant,
  FaultyRedis,
  LoadLoop,
  MetricsPoller,
  ms,
  now,
  percentile,
  redisBin,
  type Service,
  sleep,
  startService,
  statusCounts,
  tempDir,
  waitUntil,
} from './fault-support.js';

const RATE = 100;

describeWith(redisBin, 'SLUICE_TEST_REDIS_BIN', 'fault: Redis down under load', () => {
  const temp = tempDir('sluice-fault-redis-down-');
  const dbFile = `${temp.dir}/db.sqlite`;
  let redis: FaultyRedis;
  let service: Service;

  beforeAll(async () => {
    redis = await FaultyRedis.start(redisBin as string);
    service = await startService({
      SLUICE_DB_URL: `sqlite:${dbFile}`,
      SLUICE_SECRET_KEY_FILE: `${temp.dir}/secret.key`,
      SLUICE_REDIS_URL: redis.url,
      SLUICE_REDIS_KEY_PREFIX: `fault-down-${process.pid}:`,
      SLUICE_ADMIN_TOKEN: 'fault-admin',
      // Config entries expire during the outage, so reloads must go around Redis to SQL in time.
      SLUICE_CONFIG_CACHE_MS: '1000',
    });
  });

  afterAll(async () => {
    await service?.stop();
    await redis?.stop();
    temp.cleanup();
  });

  it('decides in the fallback within 1 s, loses nothing, and returns to Redis when it is back', async () => {
    onTestFailed(() => console.log(`sluice breaker changes:\n${service.logLines('breaker')}\nlog tail:\n${service.logTail(10)}`));
    const tenant = await createTenant(service.base, 'fault-admin');
    const poller = new MetricsPoller(service.base);
    const load = new LoadLoop(service.base, tenant.apiKey, RATE, RATE * 40);
    let stopAt = 0;
    let restartedAt = 0;
    let closedAt: number | undefined;
    let readyWhileDown: { status: number; body: { checks?: Record<string, { ok: boolean; detail?: string }> } } | undefined;
    let steadyAt: number | undefined;
    try {
      // Steady state on Redis. (The first calls of a new process can be slow enough to open the
      // breaker once: script loading and a cold JIT. Wait until it has been closed for a second.)
      expect(await waitUntil(() => poller.steady(0, 1000), 15_000)).toBeDefined();

      stopAt = now();
      await redis.kill();
      await sleep(3000); // degraded: the fallback decides

      const ready = await fetch(`${service.base}/readyz`);
      readyWhileDown = { status: ready.status, body: (await ready.json()) as NonNullable<typeof readyWhileDown>['body'] };

      restartedAt = now();
      await redis.restart();
      closedAt = await waitUntil(async () => (await poller.read()).state === 0, 12_000);
      // Back on Redis for good: closed, and no decision made by the fallback, for a whole second.
      // (Right after recovery the first calls can be slow again and reopen it once: that counts.)
      if (await waitUntil(() => poller.steady(0, 1000), 12_000)) steadyAt = poller.steadySince(0);
    } finally {
      await load.stop();
      await poller.stop();
    }
    const samples = load.samples;

    // Fallback: the first request sent after the kill that was accepted, measured from the kill.
    const afterStop = samples.filter((sample) => sample.sentAt >= stopAt);
    const firstAccepted = afterStop.find((sample) => sample.status === 202);
    const timeToFallback = firstAccepted ? firstAccepted.doneAt - stopAt : Number.NaN;
    const opened = poller.first(stopAt, (reading) => reading.state === 2);
    const counts = statusCounts(samples);
    const serverErrors = samples.filter((sample) => sample.status >= 500).length;
    const unanswered = samples.filter((sample) => sample.status === 0).length;
    const non2xx = samples.filter((sample) => sample.status < 200 || sample.status >= 300).length;
    const down = samples.filter((sample) => sample.sentAt >= stopAt && sample.sentAt < restartedAt);
    const downLatency = down.map((sample) => sample.doneAt - sample.sentAt);
    const recovered = closedAt === undefined ? Number.NaN : closedAt - restartedAt;
    const backOnRedis = steadyAt === undefined ? Number.NaN : steadyAt - restartedAt;
    // Decisions the fallback made from the kill until Redis was steadily back (the warm-up excluded).
    const before = poller.readings.filter((reading) => reading.at < stopAt).at(-1)?.degraded ?? 0;
    const degradedTotal = (poller.readings.at(-1)?.degraded ?? Number.NaN) - before;

    // Nothing accepted is lost: every id answered 202 is a row.
    const accepted = samples.filter((sample) => sample.status === 202).map((sample) => sample.id!);
    const file = new Database(dbFile, { readonly: true, fileMustExist: true });
    let rows: Set<string>;
    try {
      rows = new Set((file.prepare('SELECT id FROM messages WHERE tenant_id = ?').all(tenant.id) as { id: string }[]).map((row) => row.id));
    } finally {
      file.close();
    }
    const lost = accepted.filter((id) => !rows.has(id));

    console.log(
      `[fault redis-down] ${samples.length} requests at ${RATE}/s, statuses ${JSON.stringify(counts)}; ` +
        `SIGKILL → first 202: ${ms(timeToFallback)}, breaker open seen after ${ms(opened && opened.at - stopAt)}; ` +
        `while down: ${down.length} requests, ${down.filter((s) => s.status === 202).length} accepted, latency p50 ${ms(percentile(downLatency, 50))} ` +
        `p99 ${ms(percentile(downLatency, 99))} max ${ms(Math.max(...downLatency))}; degraded decisions ${degradedTotal}; ` +
        `5xx ${serverErrors}, non-2xx ${non2xx}, lost ${lost.length}; /readyz while down ${readyWhileDown?.status} ` +
        `(limiter: ${readyWhileDown?.body.checks?.limiter?.detail}); restart → breaker closed: ${ms(recovered)}, steadily back on Redis: ${ms(backOnRedis)}`,
    );

    expect(unanswered).toBe(0);
    expect(serverErrors).toBe(0);
    expect(timeToFallback).toBeLessThan(1000);
    expect(down.filter((sample) => sample.status === 202).length).toBeGreaterThan(RATE * 2);
    expect(lost).toEqual([]);
    expect(opened).toBeDefined();
    expect(degradedTotal).toBeGreaterThan(0);
    expect(readyWhileDown?.body.checks?.limiter?.detail).toMatch(/^breaker (open|half-open)$/);
    // Degraded is still ready: the instance decides with the fallback. Redis itself is not ok.
    expect(readyWhileDown?.status).toBe(200);
    expect(readyWhileDown?.body.checks?.redis).toMatchObject({
      ok: false,
      detail: 'unreachable (see the log)',
      warning: expect.stringContaining('fallback'),
    });
    expect(closedAt).toBeDefined();
    // A few seconds: reconnection backoff, then each failed round of half-open probes costs another open period.
    expect(recovered).toBeLessThan(8000);
    expect(steadyAt).toBeDefined();
    expect(backOnRedis).toBeLessThan(10_000);
  }, 60_000);
});

describeWith(redisBin, 'SLUICE_TEST_REDIS_BIN', 'fault: Redis unreachable from the start, then up', () => {
  const temp = tempDir('sluice-fault-redis-absent-');
  let redis: FaultyRedis;
  let service: Service;
  let tenant: { id: string; apiKey: string };
  const accepted: string[] = [];

  beforeAll(async () => {
    redis = await FaultyRedis.unstarted(redisBin as string);
    service = await startService({
      SLUICE_DB_URL: `sqlite:${temp.dir}/db.sqlite`,
      SLUICE_SECRET_KEY_FILE: `${temp.dir}/secret.key`,
      SLUICE_REDIS_URL: redis.url,
      SLUICE_ADMIN_TOKEN: 'fault-admin',
      SLUICE_REDIS_COMMAND_TIMEOUT_MS: '300',
      // Sends (console provider) by its own dispatchers; a poll a minute away, so only a wake
      // can make a message leave within seconds.
      SLUICE_ROLES: 'api,worker',
      SLUICE_POLL_MS: '60000',
    });
  });

  afterAll(async () => {
    await service?.stop();
    await redis?.stop();
    temp.cleanup();
  });

  const send = async (to: string) => {
    const answer = await fetch(`${service.base}/v1/messages`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ channel: 'sms', to, body: 'code 1234' }),
    });
    if (answer.status === 202) accepted.push(((await answer.json()) as { id: string }).id);
    return answer.status;
  };
  const statusOf = async (id: string) => {
    const answer = await fetch(`${service.base}/v1/messages/${id}`, { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
    return ((await answer.json()) as { status: string }).status;
  };

  it('stays up, takes admin changes and sends in the fallback, and says so once, not per reconnect', async () => {
    onTestFailed(() => console.log(`log tail:\n${service.logTail(120)}`));
    // Before: a subscription that failed at start was an unhandled rejection, and the process exited.
    await sleep(1500);
    expect(service.child.exitCode).toBeNull();
    tenant = await createTenant(service.base, 'fault-admin'); // rules and quotas saved: 200, not 500
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await send(`+861380013${String(8000 + i)}`));
    expect(statuses).toEqual([202, 202, 202, 202, 202]);
    const started = now();
    const ready = await fetch(`${service.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(now() - started).toBeLessThan(900); // within a probe's usual 1 s timeout
    expect(service.logLines('Unhandled error event')).toBe('');
    const errorLines = service.logLines('Redis connection error');
    expect(errorLines).not.toBe('');
    expect(errorLines.split('\n')).toHaveLength(1);
    expect(service.child.exitCode).toBeNull();
    // The dispatchers wait for Redis: a warning in sluice's words (no driver wording, no stack), and
    // nothing at error level, which is kept for what an operator must act on.
    expect(await waitUntil(() => service.logLines('dispatcher paused') !== '', 15_000)).toBeDefined();
    const paused = service.logLines('dispatcher paused');
    for (const line of paused.split('\n')) {
      expect(JSON.parse(line)).toMatchObject({ level: 40, reason: expect.stringContaining('Redis') });
      expect(line).not.toContain('"err"');
    }
    expect(service.logLines('dispatcher tick failed')).toBe('');
    expect(service.logLines('"level":50')).toBe('');
  });

  it('once Redis is up: subscribes, takes its locks, sends what waited, and a new message at once', async () => {
    onTestFailed(() => console.log(`log tail:\n${service.logTail(120)}`));
    await redis.restart();
    // The reconnected wake channel wakes every dispatcher: lock, rebuild from SQL, send.
    const waited = await waitUntil(async () => (await Promise.all(accepted.map(statusOf))).every((status) => status === 'sent'), 10_000);
    expect(waited).toBeDefined();
    // Before: the SUBSCRIBE refused while Redis was away was never made again, so no wake ever
    // arrived and this message waited for the minute's poll.
    expect(await send('+8613800139000')).toBe(202);
    const id = accepted.at(-1) as string;
    expect(await waitUntil(async () => (await statusOf(id)) === 'sent', 5000)).toBeDefined();
  });
});

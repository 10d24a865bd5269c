/**
 * Fault drill 2 (DESIGN.md §7, docs/degradation.md "Measured"): Redis hangs under steady load.
 * A private redis-server is frozen with SIGSTOP for 2 s (its connections stay open, nothing
 * answers: the worst case for a client, no error ever arrives). The breaker must open on the
 * limiter's timeouts, decisions go on in the fallback with no 5xx, and after SIGCONT the breaker
 * closes again by itself.
 */
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
const PAUSE_MS = 2000;
const REDIS_TIMEOUT_MS = 100; // the default, spelled out: the first requests of the pause wait this long

describeWith(redisBin, 'SLUICE_TEST_REDIS_BIN', 'fault: Redis paused under load', () => {
  const temp = tempDir('sluice-fault-redis-paused-');
  let redis: FaultyRedis;
  let service: Service;

  beforeAll(async () => {
    redis = await FaultyRedis.start(redisBin as string);
    service = await startService({
      SLUICE_DB_URL: `sqlite:${temp.dir}/db.sqlite`,
      SLUICE_SECRET_KEY_FILE: `${temp.dir}/secret.key`,
      SLUICE_REDIS_URL: redis.url,
      SLUICE_REDIS_KEY_PREFIX: `fault-paused-${process.pid}:`,
      SLUICE_REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
      SLUICE_ADMIN_TOKEN: 'fault-admin',
      // Config entries expire during the pause, so reloads must go around Redis to SQL in time.
      SLUICE_CONFIG_CACHE_MS: '1000',
    });
  });

  afterAll(async () => {
    await service?.stop();
    await redis?.stop(); // SIGCONT first, whatever happened
    temp.cleanup();
  });

  it('opens the breaker, keeps deciding without 5xx while Redis is frozen, and closes after SIGCONT', async () => {
    onTestFailed(() => console.log(`sluice breaker changes:\n${service.logLines('breaker')}\nlog tail:\n${service.logTail(10)}`));
    const tenant = await createTenant(service.base, 'fault-admin');
    const poller = new MetricsPoller(service.base);
    const load = new LoadLoop(service.base, tenant.apiKey, RATE, RATE * 40);
    let pausedAt = 0;
    let resumedAt = 0;
    let closedAt: number | undefined;
    let steadyAt: number | undefined;
    try {
      // Steady state on Redis (a new process may open the breaker once while warming up).
      expect(await waitUntil(() => poller.steady(0, 1000), 15_000)).toBeDefined();

      pausedAt = now();
      redis.pause();
      await sleep(PAUSE_MS);
      resumedAt = now();
      redis.resume();

      closedAt = await waitUntil(async () => (await poller.read()).state === 0, 12_000);
      // Back on Redis for good: closed, and no decision made by the fallback, for a whole second.
      // (Right after recovery the first calls can be slow again and reopen it once: that counts.)
      if (await waitUntil(() => poller.steady(0, 1000), 12_000)) steadyAt = poller.steadySince(0);
    } finally {
      redis.resume();
      await load.stop();
      await poller.stop();
    }
    const samples = load.samples;

    const paused = samples.filter((sample) => sample.sentAt >= pausedAt && sample.sentAt < resumedAt);
    const latency = paused.map((sample) => sample.doneAt - sample.sentAt);
    // The requests in the breaker's first 100 ms of the pause wait for the limiter's timeout; the rest are decided at once.
    const firstAccepted = paused.find((sample) => sample.status === 202);
    const timeToFallback = firstAccepted ? firstAccepted.doneAt - pausedAt : Number.NaN;
    const opened = poller.first(pausedAt, (reading) => reading.state === 2);

    const serverErrors = samples.filter((sample) => sample.status >= 500).length;
    const unanswered = samples.filter((sample) => sample.status === 0).length;
    const non2xx = samples.filter((sample) => sample.status < 200 || sample.status >= 300).length;
    const recovered = closedAt === undefined ? Number.NaN : closedAt - resumedAt;
    const backOnRedis = steadyAt === undefined ? Number.NaN : steadyAt - resumedAt;
    // Decisions the fallback made from the pause until Redis was steadily back (the warm-up excluded).
    const before = poller.readings.filter((reading) => reading.at < pausedAt).at(-1)?.degraded ?? 0;
    const degradedTotal = (poller.readings.at(-1)?.degraded ?? Number.NaN) - before;
    const slowest = paused.reduce((worst, sample) => Math.max(worst, sample.doneAt - sample.sentAt), 0);

    console.log(
      `[fault redis-paused] ${samples.length} requests at ${RATE}/s, statuses ${JSON.stringify(statusCounts(samples))}; ` +
        `SIGSTOP ${PAUSE_MS} ms → first 202: ${ms(timeToFallback)}, breaker open seen after ${ms(opened && opened.at - pausedAt)}; ` +
        `during the pause: ${paused.length} requests, ${paused.filter((s) => s.status === 202).length} accepted, latency p50 ${ms(percentile(latency, 50))} ` +
        `p90 ${ms(percentile(latency, 90))} p99 ${ms(percentile(latency, 99))} max ${ms(slowest)} (timeout ${REDIS_TIMEOUT_MS} ms); ` +
        `degraded decisions ${degradedTotal}; 5xx ${serverErrors}, non-2xx ${non2xx}; SIGCONT → breaker closed: ${ms(recovered)}, steadily back on Redis: ${ms(backOnRedis)}`,
    );

    expect(unanswered).toBe(0);
    expect(serverErrors).toBe(0);
    expect(opened).toBeDefined();
    expect(paused.filter((sample) => sample.status === 202).length).toBeGreaterThan(RATE);
    expect(degradedTotal).toBeGreaterThan(0);
    // Nobody waited for the whole pause: the limiter's timeout and the open breaker bound the wait.
    expect(slowest).toBeLessThan(PAUSE_MS);
    expect(closedAt).toBeDefined();
    // A few seconds: reconnection backoff, then each failed round of half-open probes costs another open period.
    expect(recovered).toBeLessThan(8000);
    expect(steadyAt).toBeDefined();
    expect(backOnRedis).toBeLessThan(10_000);
  }, 60_000);
});

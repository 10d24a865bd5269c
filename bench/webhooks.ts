/**
 * What the outbox costs and carries: the same accept-to-sent run (messages accepted through the
 * real admission chain, sent by the worker to a zero-latency stub vendor on 127.0.0.1, embedded
 * SQLite with synchronous=FULL), once with no webhook and once with the tenant subscribed to
 * `message.accepted` and `message.sent` on a zero-latency endpoint (two events per message, written
 * in the transactions of the accept and of the settle, posted signed while messages flow). The two
 * runs alternate after one warm-up run of each (not recorded); the table gives each run's median
 * of `BENCH_WEBHOOK_ROUNDS` (default 3). The stub vendor and the endpoint are child processes.
 *
 * `BENCH_WEBHOOK_MESSAGES` sets the message count (default 5,000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRuntime } from '../src/main/runtime.js';
import { startWorker } from '../src/main/worker.js';
import { createConsoleProvider } from '../src/providers/console.js';
import { loadSettings } from '../src/settings/settings.js';
import type { BenchContext, Benchmark } from './support/benchmark.js';
import { type HttpStub, startHttpStub } from './support/http-stub.js';
import { countSent, pool, positiveEnv, sleep } from './support/sends.js';
import { formatCount, markdownTable } from './support/table.js';

const ACCEPT_CONCURRENCY = 200;
const TIMEOUT_MS = 10 * 60_000;

interface Run {
  name: string;
  sentMs: number;
  /** With a webhook: when the last event was answered, from the first accept. */
  eventsMs?: number;
  events?: number;
}

/**
 * `postEvents: false` subscribes the endpoint but keeps the event dispatchers asleep (a poll of a
 * minute, after their first empty pass): what writing the outbox alone costs.
 */
async function runOnce(
  name: string,
  vendor: HttpStub,
  endpoint: HttpStub | undefined,
  count: number,
  context: BenchContext,
  postEvents = true,
): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-webhooks-'));
  const runtime = await createRuntime(
    loadSettings(
      {
        SLUICE_DB_URL: `sqlite:${join(dir, 'sluice.db')}`,
        SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
        SLUICE_LOG_LEVEL: 'silent',
        SLUICE_SEND_CONCURRENCY: '32',
        SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
        ...(postEvents ? {} : { SLUICE_WEBHOOK_POLL_MS: '60000' }),
      },
      undefined,
    ),
  );
  const delivery = startWorker(runtime, createConsoleProvider({ id: 'console', channel: 'webhook', out: { write: () => true } }));
  try {
    const tenant = await runtime.http.tenants.createTenant(`bench-${name}`);
    await runtime.repositories.providers.create({
      scope: tenant.id,
      channel: 'webhook',
      kind: 'http',
      name: 'stub',
      priority: 1,
      qps: 1_000_000,
      config: { url: vendor.url, timeoutMs: 5000 },
      secret: JSON.stringify({ signingSecret: 'bench-signing-secret' }),
    });
    if (endpoint) await runtime.services.webhooks.create(tenant.id, { url: endpoint.url, events: ['message.accepted', 'message.sent'] });
    const vendorBefore = vendor.requests();
    const endpointBefore = endpoint?.requests() ?? 0;
    context.progress(`${name}: ${count} messages`);
    const started = performance.now();
    await pool(count, ACCEPT_CONCURRENCY, (i) =>
      runtime.http.messages.send(tenant.apiKey, { channel: 'webhook', to: `b-${i}`, body: `m ${i}` }),
    );
    let sentMs: number | undefined;
    let eventsMs: number | undefined;
    const deadline = started + TIMEOUT_MS;
    while (sentMs === undefined || (endpoint && postEvents && eventsMs === undefined)) {
      if (performance.now() > deadline) throw new Error(`${name}: not done after ${TIMEOUT_MS} ms`);
      if (sentMs === undefined && vendor.requests() - vendorBefore >= count && (await countSent(runtime, tenant.id)) >= count)
        sentMs = performance.now() - started;
      if (endpoint && eventsMs === undefined && endpoint.requests() - endpointBefore >= 2 * count) eventsMs = performance.now() - started;
      await sleep(5);
    }
    return { name, sentMs, ...(endpoint && postEvents ? { eventsMs, events: endpoint.requests() - endpointBefore } : {}) };
  } finally {
    await delivery.stop();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  name: 'webhooks',
  title: 'Status callbacks (the outbox)',
  async run(context) {
    const count = positiveEnv('BENCH_WEBHOOK_MESSAGES', 5000);
    const rounds = positiveEnv('BENCH_WEBHOOK_ROUNDS', 3);
    // Receivers in child processes: what is measured is sluice's sending, not the stubs' answering.
    const vendor = await startHttpStub({ inChild: true });
    const endpoint = await startHttpStub({ inChild: true });
    try {
      const without: Run[] = [];
      const withHook: Run[] = [];
      const writeOnly: Run[] = [];
      // Round 0 warms the JIT and the page cache for all three and is not recorded.
      for (let round = 0; round <= rounds; round++) {
        const keep = <T>(runs: T[], run: T) => (round > 0 ? runs.push(run) : 0);
        keep(without, await runOnce('no webhook', vendor, undefined, count, context));
        keep(withHook, await runOnce('subscribed endpoint', vendor, endpoint, count, context));
        keep(writeOnly, await runOnce('subscribed, events written, not posted', vendor, endpoint, count, context, false));
      }
      const median = (runs: Run[]) => [...runs].sort((x, y) => x.sentMs - y.sentMs)[Math.floor((runs.length - 1) / 2)]!;
      const a = median(without);
      const b = median(withHook);
      const c = median(writeOnly);
      const rate = (run: Run) => (count * 1000) / run.sentMs;
      const table = markdownTable(
        [
          { header: 'run' },
          { header: 'first accept → last sent', align: 'right' },
          { header: 'every run', align: 'right' },
          { header: 'sent', align: 'right' },
          { header: 'vs no webhook', align: 'right' },
          { header: 'events answered 2xx', align: 'right' },
          { header: 'events/s (first accept → last event)', align: 'right' },
        ],
        (
          [
            [a, without],
            [b, withHook],
            [c, writeOnly],
          ] as const
        ).map(([run, runs]) => [
          run.name,
          `${(run.sentMs / 1000).toFixed(2)} s`,
          runs.map((each) => (each.sentMs / 1000).toFixed(2)).join(', '),
          `${formatCount(rate(run))} /s`,
          `${(((rate(run) - rate(a)) / rate(a)) * 100).toFixed(1)} %`,
          run.events === undefined ? '—' : formatCount(run.events),
          run.eventsMs === undefined ? '—' : `${formatCount(((run.events ?? 0) * 1000) / run.eventsMs)} /s`,
        ]),
      );
      return [
        `${formatCount(count)} messages accepted (${ACCEPT_CONCURRENCY} in flight) and sent to a zero-latency stub vendor, embedded SQLite (synchronous=FULL); the subscribed run also writes two events per message (accepted, sent) in the transactions of the changes and posts them signed to a zero-latency endpoint (SLUICE_WEBHOOK_CONCURRENCY default) while messages flow. The stub vendor and the endpoint are child processes (a receiver is elsewhere). Median of ${rounds} alternating runs each, after a warm-up run of each.`,
        '',
        table,
      ].join('\n');
    } finally {
      await vendor.close();
      await endpoint.close();
    }
  },
};

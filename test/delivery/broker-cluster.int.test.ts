/**
 * Broker mode on a 3-node JetStream cluster (replicas 3), the node leading the deliver stream
 * killed -9 mid-stream and started again (docs/operations.md, "JetStream cluster"). A runtime and
 * its worker send 900 messages to the webhook stub, paced so the kill lands mid-stream. Every
 * message is sent; a request reaches the stub twice at most for what was in flight; and the stall
 * sluice adds to the election (from the moment the survivors report a new stream leader to the
 * first send after it) is measured, printed and bounded. `SLUICE_DRILL_RUNS=5` repeats the drill
 * on a fresh cluster each time and prints the median (the figure docs/operations.md quotes).
 */
import { afterAll, expect, it } from 'vitest';
import { startWorker } from '../../src/main/worker.js';
import { uniquePrefix } from '../broker/support.js';
import { type PrivateNatsCluster, privateNatsBin, startPrivateNatsCluster } from '../support/private-nats.js';
import { describeWith, servers } from '../support/servers.js';
import { sendMessages, streamsOf, stubTenant } from './broker-support.js';
import { countFinal, loadMessages, silentConsole, startWebhookStub, tempDir, testEnv, testRuntime, waitFor } from './delivery-support.js';

const COUNT = 900;
const SEND_CONCURRENCY = 16;
const PROVIDER_QPS = 150;
const RUNS = Number(process.env.SLUICE_DRILL_RUNS ?? 1);
/** The target is a median of 1 s (0.18 s measured); one run on a loaded CI machine gets this much room (before the fix: 3.0–4.0 s). */
const STALL_BOUND_MS = 2500;

interface Jsz {
  account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[];
}

/** The deliver stream's leader as the nodes other than `except` report it (undefined while none is elected). */
async function streamLeader(cluster: PrivateNatsCluster, stream: string, except?: string): Promise<string | undefined> {
  for (const [name, url] of cluster.monitorUrls) {
    if (name === except) continue;
    const jsz = (await fetch(`${url}/jsz?streams=true`, { signal: AbortSignal.timeout(1000) })
      .then((response) => response.json())
      .catch(() => ({}))) as Jsz;
    const detail = jsz.account_details?.flatMap((account) => account.stream_detail ?? []).find((found) => found.name === stream);
    const leader = detail?.cluster?.leader;
    if (leader && leader !== except) return leader;
  }
  return undefined;
}

interface Outcome {
  electionMs: number;
  stallMs: number;
  gapMs: number;
  duplicates: number;
}

async function drill(): Promise<Outcome> {
  const cluster = await startPrivateNatsCluster();
  const stub = await startWebhookStub();
  const temp = tempDir();
  const prefix = uniquePrefix();
  const env = testEnv(temp.dir, servers.redisUrl, {
    SLUICE_BROKER_URL: cluster.urls.join(','),
    SLUICE_BROKER_PREFIX: prefix,
    SLUICE_BROKER_REPLICAS: '3',
    SLUICE_LEASE_MS: '1500',
    SLUICE_REDIS_KEY_PREFIX: `${prefix}:`,
    SLUICE_SEND_CONCURRENCY: String(SEND_CONCURRENCY),
  });
  const runtime = await testRuntime(env);
  const delivery = startWorker(runtime, silentConsole());
  try {
    const tenant = await stubTenant({ runtime, stub }, 'cluster', { qps: PROVIDER_QPS });
    const ids = await sendMessages(runtime, tenant.apiKey, COUNT);
    expect(await waitFor(() => stub.arrivals.size >= COUNT / 3, 60_000)).toBe(true);
    const { deliver } = streamsOf(prefix);
    const leader = await streamLeader(cluster, deliver);
    expect(cluster.names).toContain(leader);
    const killedAt = Date.now();
    await cluster.kill(leader!);
    let elected: string | undefined;
    expect(
      await waitFor(async () => {
        elected = await streamLeader(cluster, deliver, leader);
        return elected !== undefined;
      }, 30_000),
    ).toBe(true);
    const electedAt = Date.now();
    await cluster.restart(leader!);

    const done = await waitFor(async () => (await countFinal(runtime, ids)) === ids.length, 60_000);
    expect(done).toBe(true);
    const messages = await loadMessages(runtime, ids);
    let duplicates = 0;
    const times: number[] = [];
    for (const id of ids) {
      const message = messages.get(id);
      expect(message?.status, `${id}: ${message?.lastError}`).toBe('sent');
      const arrivals = stub.arrivals.get(id) ?? [];
      expect(arrivals.length, `${id} never reached the provider`).toBeGreaterThanOrEqual(1);
      duplicates += arrivals.length - 1;
      times.push(...arrivals);
    }
    times.sort((a, b) => a - b);
    const firstAfter = times.find((time) => time >= electedAt);
    expect(firstAfter).toBeDefined();
    let gapMs = 0;
    for (let i = 1; i < times.length; i++) gapMs = Math.max(gapMs, times[i]! - times[i - 1]!);
    const outcome = { electionMs: electedAt - killedAt, stallMs: firstAfter! - electedAt, gapMs, duplicates };
    console.log(
      `JetStream cluster drill: stream leader ${leader} killed -9, ${elected} elected after ${outcome.electionMs} ms; ` +
        `first send ${outcome.stallMs} ms after the election; longest gap between sends ${gapMs} ms; ` +
        `${COUNT} messages all sent, ${duplicates} duplicate requests`,
    );
    return outcome;
  } finally {
    await delivery.stop();
    await runtime.close();
    await stub.close();
    await cluster.stop();
    temp.cleanup();
  }
}

describeWith(
  servers.redisUrl && privateNatsBin,
  'SLUICE_TEST_REDIS_URL and SLUICE_TEST_NATS_BIN',
  'broker mode on a 3-node JetStream cluster',
  () => {
    const outcomes: Outcome[] = [];
    afterAll(() => {
      if (outcomes.length < 2) return;
      const stalls = outcomes.map((outcome) => outcome.stallMs).sort((a, b) => a - b);
      console.log(
        `JetStream cluster drill, ${outcomes.length} runs: stall after the election p50 ${stalls[Math.floor(stalls.length / 2)]} ms (${stalls.join(', ')})`,
      );
    });

    it('the stream leader killed -9 and restarted: every message sent, duplicates within what was in flight, sends back within seconds of the election', {
      timeout: RUNS * 150_000,
    }, async () => {
      for (let run = 0; run < RUNS; run++) {
        const outcome = await drill();
        outcomes.push(outcome);
        // Nothing is sent twice but a job in hand whose outcome was committed and whose ack was lost; at most what is pulled at once.
        expect(outcome.duplicates).toBeLessThanOrEqual(2 * SEND_CONCURRENCY);
        expect(outcome.stallMs).toBeLessThanOrEqual(STALL_BOUND_MS);
      }
    });
  },
);

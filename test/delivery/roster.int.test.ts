/**
 * Workers share the partitions (src/delivery/roster.ts): a worker that joins takes its share from
 * the one that held them all, and one that leaves gives its share back, on a real Redis.
 */
import { afterEach, expect, it } from 'vitest';
import type { Delivery } from '../../src/delivery/delivery.js';
import { createRuntime, type Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { loadSettings } from '../../src/settings/settings.js';
import { describeWith, servers } from '../support/servers.js';
import { silentConsole, tempDir, testEnv, waitFor } from './delivery-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'partitions shared among workers', () => {
  const prefix = `roster-${Date.now()}-${Math.random().toString(36).slice(2)}:`;

  async function worker(): Promise<{ runtime: Runtime; delivery: Delivery; held: () => number; heldEvents: () => number }> {
    const temp = tempDir();
    const env = testEnv(temp.dir, servers.redisUrl, { SLUICE_REDIS_KEY_PREFIX: prefix, SLUICE_PARTITIONS: '2', SLUICE_LEASE_MS: '900' });
    const runtime = await createRuntime(loadSettings(env, undefined));
    const delivery = startWorker(runtime, silentConsole());
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await delivery.stop();
      await runtime.close();
      temp.cleanup();
    };
    cleanups.push(stop);
    return {
      runtime,
      delivery,
      held: () => delivery.dispatchers.filter((d) => d.holdsLock()).length,
      heldEvents: () => delivery.eventDispatchers.filter((d) => d.holdsLock()).length,
    };
  }

  it('a joining worker takes its share of the six partitions; a leaving one gives it back', async () => {
    const first = await worker();
    expect(await waitFor(async () => first.held() === 6, 5000)).toBe(true);

    const second = await worker();
    // The first gives up three (one per tick, each off-limits to it for two leases); the second takes them.
    expect(await waitFor(async () => first.held() === 3 && second.held() === 3, 10_000), `${first.held()} + ${second.held()}`).toBe(true);

    await second.delivery.stop();
    expect(await waitFor(async () => first.held() === 6, 10_000), `${first.held()}`).toBe(true);
  }, 30_000);

  it('the webhook event partitions are shared the same way, counted apart from the message partitions', async () => {
    const first = await worker();
    expect(await waitFor(async () => first.heldEvents() === 2 && first.held() === 6, 5000)).toBe(true);
    const second = await worker();
    const spread = () => first.heldEvents() === 1 && second.heldEvents() === 1 && first.held() === 3 && second.held() === 3;
    expect(await waitFor(async () => spread(), 15_000), `${first.heldEvents()} + ${second.heldEvents()}`).toBe(true);
    await second.delivery.stop();
    expect(await waitFor(async () => first.heldEvents() === 2, 10_000), `${first.heldEvents()}`).toBe(true);
  }, 40_000);
});

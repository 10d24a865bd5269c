/**
 * Issue 36's race: 1,000 sends are queued to one number and an opt-out arrives after about 300
 * have left. At most the sends already handed to a provider leave after it; every other message
 * ends `suppressed`. On SQLite (embedded) and on PostgreSQL + Redis.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Delivery } from '../../src/delivery/delivery.js';
import type { Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import type { Provider } from '../../src/providers/provider.js';
import { describeWith, servers } from '../support/servers.js';
import { createPgDatabase, tempDir, testEnv, testRuntime, waitFor, withDatabaseUrl } from './delivery-support.js';

const COUNT = 1000;
const TO = '+8613800138066';

const backends = [
  { name: 'SQLite', available: true, variable: '', pg: false },
  {
    name: 'PostgreSQL + Redis',
    available: servers.pgUrl && servers.redisUrl,
    variable: 'SLUICE_TEST_PG_URL and SLUICE_TEST_REDIS_URL',
    pg: true,
  },
];

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `STOP race on ${backend.name}`, () => {
    const temp = tempDir();
    let database: { url: string; drop(): Promise<void> } | undefined;
    let runtime: Runtime;
    let delivery: Delivery | undefined;
    let handed = 0;
    /** Sends handed to the provider after the suppression was committed: must stay 0. */
    let handedAfterStop = 0;
    let stopped = false;
    let stopping: Promise<unknown> | undefined;
    let tenantId = '';

    const provider: Provider = {
      id: 'race',
      kind: 'console',
      channel: 'sms',
      async send(message) {
        if (stopped) handedAfterStop++;
        handed++;
        if (handed === 300)
          stopping = runtime.services.suppressions.suppress(tenantId, 'sms', TO, { source: 'admin', reason: 'STOP' }).then(() => {
            stopped = true;
          });
        return { providerMessageId: message.id };
      },
    };

    beforeAll(async () => {
      let env = testEnv(temp.dir, backend.pg ? (servers.redisUrl as string) : undefined);
      if (backend.pg) {
        database = await createPgDatabase(servers.pgUrl as string);
        env = withDatabaseUrl(env, database.url);
      }
      runtime = await testRuntime(env);
    });

    afterAll(async () => {
      await delivery?.stop();
      await runtime?.close();
      await database?.drop();
      temp.cleanup();
    });

    it('lets at most the sends already handed over leave after the STOP; the rest end suppressed', { timeout: 180_000 }, async () => {
      const tenant = await runtime.services.tenants.createTenant(`race-${backend.name}`);
      tenantId = tenant.id;
      await runtime.services.rules.setRules(tenant.id, 'sms', []);
      const ids: string[] = [];
      for (let start = 0; start < COUNT; start += 100) {
        const batch = await Promise.all(
          Array.from({ length: 100 }, (_, k) =>
            runtime.services.messages.send(tenant.apiKey, { channel: 'sms', to: TO, body: `m ${start + k}`, category: 'marketing' }),
          ),
        );
        ids.push(...batch.map((result) => result.id));
      }
      await runtime.repositories.messages.drain();
      delivery = startWorker(runtime, provider);
      const count = async (statuses: string[]) => {
        const row = await runtime.database.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('tenant_id', '=', tenant.id)
          .where('status', 'in', statuses as never)
          .executeTakeFirst();
        return Number(row?.count ?? 0);
      };
      expect(await waitFor(async () => (await count(['sent', 'suppressed'])) === COUNT, 150_000)).toBe(true);
      await stopping;
      const sent = await count(['sent']);
      const suppressed = await count(['suppressed']);
      expect(handedAfterStop).toBe(0);
      expect(sent).toBe(handed);
      expect(sent).toBeGreaterThanOrEqual(300);
      expect(suppressed).toBe(COUNT - sent);
      expect(suppressed).toBeGreaterThan(0);
      console.log(`${backend.name}: ${sent} sent (300 before the STOP), ${suppressed} suppressed`);
    });
  });
}

/**
 * `serve`'s shutdown under requests whose clients hung up: their handlers run on, and the stop
 * waits for them before it closes Redis and the database. Each request is held inside the chain,
 * after the frequency step consumed its slot in Redis and before the message is written (a step
 * added through `chain.with`, the chain's own extension point), while the clients hang up and the
 * stop begins; it goes on when the stop says it waits for them, or once the stop has ended (what
 * happened before the fix). Every admitted message must then be stored, or its slot given back,
 * and no step may have met a closed dependency.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import pino from 'pino';
import { afterAll, expect, it } from 'vitest';
import type { Interceptor } from '../../src/admission/chain.js';
import { createRuntime, type Runtime } from '../../src/main/runtime.js';
import { startRoles } from '../../src/main/service.js';
import type { MessageService } from '../../src/services/contracts.js';
import { AdmittingMessageService } from '../../src/services/message-service.js';
import { loadSettings } from '../../src/settings/settings.js';
import { silentConsole, tempDir, testEnv } from '../delivery/delivery-support.js';
import { describeWith, servers } from '../support/servers.js';

const SENDS = 24;
const phone = (n: number) => `+86139${String(n).padStart(8, '0')}`;

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'shutdown under requests whose clients hung up', () => {
  const temp = tempDir();
  let after: Runtime | undefined;
  afterAll(async () => {
    await after?.close();
    temp.cleanup();
  });

  it('waits for their handlers: each admitted message is stored, nothing meets a closed database or Redis', async () => {
    const lines: { level: number; msg: string }[] = [];
    let stopWaits = () => {};
    const waiting = new Promise<void>((resolve) => {
      stopWaits = resolve;
    });
    const logger = pino(
      { level: 'info' },
      {
        write: (line: string) => {
          const entry = JSON.parse(line) as { level: number; msg: string };
          lines.push(entry);
          if (entry.msg === 'waiting for the requests in progress') stopWaits();
        },
      },
    );
    const env = testEnv(temp.dir, servers.redisUrl, {
      SLUICE_REDIS_KEY_PREFIX: `test:shutdown:${randomUUID().slice(0, 8)}:`,
      SLUICE_HOST: '127.0.0.1',
      SLUICE_PORT: '0',
      SLUICE_ROLES: 'api',
      SLUICE_LOG_LEVEL: 'silent',
    });
    const runtime = await createRuntime(loadSettings(env, undefined), { logger });
    const tenant = await runtime.http.tenants.createTenant(`shutdown-${Date.now()}`);
    await runtime.http.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 3600, limit: 1, banSeconds: 0 }]);

    // Holds each send between its frequency slot and its write until released.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = 0;
    let allHeld = () => {};
    const everyoneHeld = new Promise<void>((resolve) => {
      allHeld = resolve;
    });
    const gate: Interceptor = {
      name: 'test-hold',
      async run() {
        if (++held === SENDS) allHeld();
        await released;
        return undefined;
      },
    };
    const chain = runtime.services.messages.chain.with(gate, 'persist');
    const service = new AdmittingMessageService(chain, runtime.repositories.messages, runtime.clock);
    // Each send's end, whichever way it ends: the assertions below wait for every handler.
    let settled = 0;
    let allSettled = () => {};
    const everyoneSettled = new Promise<void>((resolve) => {
      allSettled = resolve;
    });
    const messages: MessageService = Object.assign(Object.create(service) as AdmittingMessageService, {
      send: (...args: Parameters<MessageService['send']>) =>
        service.send(...args).finally(() => {
          if (++settled === SENDS) allSettled();
        }),
    });
    const serving = await startRoles(runtime, { fallbackProvider: silentConsole(), http: { ...runtime.http, messages } });
    const port = Number(new URL(serving.address).port);

    const clients = Array.from({ length: SENDS }, (_, i) => {
      const body = JSON.stringify({ channel: 'sms', to: phone(i), body: 'code 1234' });
      const client = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/messages',
        headers: {
          authorization: `Bearer ${tenant.apiKey}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      client.on('error', () => undefined);
      client.end(body);
      return client;
    });
    await everyoneHeld;
    for (const client of clients) client.destroy();

    const stopped = serving.stop();
    await Promise.race([waiting, stopped]);
    release();
    await stopped;
    await everyoneSettled;

    // What each step met: no admission failed for a closed dependency, no undo failed.
    const rejections = (await runtime.metrics.registry.getSingleMetric('sluice_admission_rejections_total')?.get())?.values ?? [];
    expect(rejections.filter((value) => value.value > 0).map((value) => value.labels)).toEqual([]);
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);

    // Every admitted message is stored, or its slot is free again: the two agree per recipient.
    after = await createRuntime(loadSettings(env, undefined), { logger: pino({ level: 'silent' }) });
    const stored = new Set(
      (await after.database.db.selectFrom('messages').select('recipient').where('tenant_id', '=', tenant.id).execute()).map(
        (row) => row.recipient,
      ),
    );
    for (let i = 0; i < SENDS; i++) {
      const counted = (await after.services.lookups.banStatus(tenant.id, 'sms', phone(i))).rules[0]!.count;
      expect({ to: phone(i), counted }).toEqual({ to: phone(i), counted: stored.has(phone(i)) ? 1 : 0 });
    }
    expect(stored.size).toBe(SENDS);
  });
});

/**
 * A real sluice for HTTP tests: a SQLite file in a fresh temp dir, the in-process limiter, the real
 * admission chain and services, driven through Fastify's `inject()` (or a real socket). Time is a
 * ManualClock shared by the limiter, the repositories and the chain, so windows are tested without
 * waiting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { buildHttpApp } from '../../src/http/app.js';
import { ManualClock } from '../../src/limiter/clock.js';
import { createRuntime, type Runtime } from '../../src/main/runtime.js';
import { loadSettings } from '../../src/settings/settings.js';

export const ADMIN_TOKEN = 'admin-token';

export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  clock: ManualClock;
  dir: string;
  /** An admin call with the admin token. */
  admin(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse>;
  /** POST /v1/messages with a tenant key. */
  send(apiKey: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** A tenant call other than a send. */
  call(apiKey: string, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse>;
  /** Creates a tenant through the admin API; resolves its id and key. */
  createTenant(name?: string): Promise<{ id: string; apiKey: string }>;
  close(): Promise<void>;
}

let tenantCounter = 0;

/**
 * Starts a runtime and its HTTP app; `env` overrides or adds settings (e.g. `SLUICE_ADMIN_TOKEN: ''`; `''` is the default).
 * `logger`: the runtime's, instead of one built from the settings.
 */
export async function startApp(env: Record<string, string> = {}, options: { logger?: Logger } = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-http-'));
  const settings = loadSettings({
    SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_ADMIN_TOKEN: ADMIN_TOKEN,
    SLUICE_LOG_LEVEL: 'silent',
    // Tenants start with no rules, so a test counts only the rules it sets; '' gives the default.
    SLUICE_NEW_TENANT_RULES: 'none',
    ...env,
  });
  const clock = new ManualClock(Date.now());
  const runtime = await createRuntime(settings, { clock, ...(options.logger ? { logger: options.logger } : {}) });
  const app = await buildHttpApp(runtime.http);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  const testApp: TestApp = {
    app,
    runtime,
    clock,
    dir,
    admin: (method, url, body) =>
      app.inject({
        method,
        url,
        headers: bearer(settings.adminToken || ADMIN_TOKEN),
        ...(body === undefined ? {} : { payload: body as object }),
      }),
    send: (apiKey, body, headers = {}) =>
      app.inject({ method: 'POST', url: '/v1/messages', headers: { ...bearer(apiKey), ...headers }, payload: body as object }),
    call: (apiKey, method, url, body) =>
      app.inject({ method, url, headers: bearer(apiKey), ...(body === undefined ? {} : { payload: body as object }) }),
    async createTenant(name = `tenant-${++tenantCounter}`) {
      const response = await testApp.admin('POST', '/v1/admin/tenants', { name });
      expect(response.statusCode, response.body).toBe(201);
      const created = response.json() as { id: string; apiKey: string };
      return { id: created.id, apiKey: created.apiKey };
    },
    async close() {
      await app.close();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return testApp;
}

/** Asserts the §8 error shape and code (and a Retry-After header on every 429); returns the body's error. */
export function expectError(response: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json() as { error: Record<string, unknown> };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect((body.error.message as string).length).toBeGreaterThan(0);
  if (status === 429) {
    expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  }
  return body.error;
}

/**
 * Hands a queued message to a provider as a dispatcher would (claim, then mark sent): the test
 * apps run no dispatcher, and feedback counts only for a message handed over.
 */
export async function handOver(t: TestApp, id: string): Promise<void> {
  const messages = t.runtime.repositories.messages;
  await messages.drain();
  const claimed = await messages.claim(id, { now: t.clock.now(), leaseMs: 60_000 });
  expect(claimed, `message ${id} could not be claimed`).toBeDefined();
  expect(await messages.markSent(id, { attempt: claimed!.attempts, now: t.clock.now() })).toBe(true);
}

/** Distinct valid mainland China mobile numbers (the default region is CN). */
export const phone = (n: number) => `+86138${String(n).padStart(8, '0')}`;

/** A valid sms body. */
export const sms = (to: string, extra: Record<string, unknown> = {}) => ({ channel: 'sms', to, body: 'your code is 1234', ...extra });

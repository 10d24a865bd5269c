/**
 * The provider directory of the worker role on a real SQLite file: which clients a tenant channel
 * gets, and when the console provider of the embedded default stands in.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SqlProviderDirectory } from '../../src/delivery/provider-directory.js';
import { ManualClock } from '../../src/limiter/clock.js';
import { createRuntime, type Runtime } from '../../src/main/runtime.js';
import { loadSettings } from '../../src/settings/settings.js';
import { addWebhookProvider, directoryDeps, silentConsole, tempDir, testEnv } from './delivery-support.js';

let cleanup = () => {};
let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  cleanup();
});

/** A runtime whose log lines are collected. */
async function loggedRuntime() {
  const temp = tempDir();
  cleanup = temp.cleanup;
  const lines: { level: number; msg: string; tenant?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  // A key given, so that making a key file (which is warned of) is not among the lines.
  const env = testEnv(temp.dir, undefined, { SLUICE_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') });
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  runtime = await createRuntime(loadSettings(env, undefined), { logger, clock });
  return { runtime, clock, lines, warnings: () => lines.filter((line) => line.level === 40) };
}

describe('SqlProviderDirectory', () => {
  it('the console fallback of the embedded default is silent', async () => {
    const { runtime, warnings } = await loggedRuntime();
    const tenant = await runtime.http.tenants.createTenant('plain');
    const directory = new SqlProviderDirectory(directoryDeps(runtime), silentConsole());
    expect((await directory.providersFor(tenant.id, 'webhook')).map((p) => p.id)).toEqual(['console-fallback']);
    expect(warnings()).toEqual([]);
  });

  it('on a server with providers, a tenant channel without one gets none (its messages fail), warned of once', async () => {
    const { runtime, clock, warnings } = await loggedRuntime();
    const served = await runtime.http.tenants.createTenant('served');
    const forgotten = await runtime.http.tenants.createTenant('forgotten');
    await addWebhookProvider(runtime, served.id, 'http://127.0.0.1:9/hook', { name: 'hook' });
    const directory = new SqlProviderDirectory(directoryDeps(runtime), silentConsole());
    expect((await directory.providersFor(served.id, 'webhook')).map((p) => p.name)).toEqual(['hook']);
    expect(warnings()).toEqual([]);
    // Not the console: it would print the recipient and the body, and count the message as sent.
    expect(await directory.providersFor(forgotten.id, 'webhook')).toEqual([]);
    clock.advance(60_000); // past the directory's cache: the list is loaded again
    expect(await directory.providersFor(forgotten.id, 'webhook')).toEqual([]);
    expect(warnings()).toEqual([expect.objectContaining({ tenant: forgotten.id, msg: expect.stringContaining('no provider configured') })]);
  });

  it('a disabled provider still counts: disabling the last one does not bring the console back', async () => {
    const { runtime } = await loggedRuntime();
    const tenant = await runtime.http.tenants.createTenant('disabled-only');
    const id = await addWebhookProvider(runtime, tenant.id, 'http://127.0.0.1:9/hook', { name: 'hook' });
    await runtime.http.providers.updateProvider(id, { enabled: false });
    const directory = new SqlProviderDirectory(directoryDeps(runtime), silentConsole());
    expect(await directory.providersFor(tenant.id, 'webhook')).toEqual([]);
  });
});

/**
 * The runtime `serve --demo` runs on. The demo's webhook endpoint is local, which the webhook
 * guard refuses; so the demo allows private targets, but only when it creates its own tenant (a
 * database without tenants, in a process that serves the API, where the demo runs) and the
 * operator did not set SLUICE_WEBHOOK_ALLOW_PRIVATE, and it says so in the log. Otherwise the
 * settings stand as given: an explicit `false` is kept, and so is the guard of a database that
 * already has tenants.
 */

import type { Settings } from '../settings/settings.js';
import { createRuntime, type Runtime } from './runtime.js';

export interface DemoOptions {
  demo: boolean;
  /** Whether SLUICE_WEBHOOK_ALLOW_PRIVATE was given (environment or settings file), whatever its value. */
  allowPrivateGiven: boolean;
}

/** The runtime `serve` runs on: `settings` as given, or with private webhook targets for a demo that creates its own tenant. */
export async function serveRuntime(settings: Settings, options: DemoOptions): Promise<Runtime> {
  const runtime = await createRuntime(settings);
  const mayRelax = options.demo && !options.allowPrivateGiven && !settings.webhookAllowPrivate && settings.roles.includes('api');
  if (!mayRelax) return runtime;
  try {
    if ((await runtime.services.tenants.listTenants({ limit: 1 })).tenants.length > 0) return runtime;
  } catch (error) {
    await runtime.close();
    throw error;
  }
  await runtime.close();
  const relaxed = await createRuntime({ ...settings, webhookAllowPrivate: true });
  relaxed.logger.warn(
    '--demo created its tenant on a new database: tenant webhooks may post to loopback and private addresses in this process (as with SLUICE_WEBHOOK_ALLOW_PRIVATE=true; set it to false to keep the guard)',
  );
  return relaxed;
}

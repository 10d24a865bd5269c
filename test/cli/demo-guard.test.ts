/**
 * `serve --demo` and the webhook guard: the demo's endpoint is local, so the demo allows private
 * webhook targets, but only when it creates its own tenant (a database without tenants) and the
 * operator did not set SLUICE_WEBHOOK_ALLOW_PRIVATE; it says so in its log. On a database that
 * has tenants, or with the setting given, the guard is what the settings say: a webhook to the
 * cloud metadata address is refused.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/main/runtime.js';
import { loadSettings } from '../../src/settings/settings.js';
import { freePort } from '../support/net.js';

const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const ADMIN = 'demo-guard-admin-token-0123456789';
const METADATA = 'http://169.254.169.254/latest/meta-data/iam/';
const RELAXED = /--demo created its tenant on a new database: tenant webhooks may post to loopback and private addresses/;

describe('serve --demo and the webhook guard', () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A directory with a database, holding a tenant when `withTenant`. */
  async function database(withTenant: boolean): Promise<Record<string, string>> {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-demo-guard-'));
    dirs.push(dir);
    const env = { SLUICE_DB_URL: `sqlite:${join(dir, 'sluice.db')}`, SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key') };
    if (withTenant) {
      const runtime = await createRuntime(loadSettings({ ...env, SLUICE_LOG_LEVEL: 'silent' }));
      await runtime.services.tenants.createTenant('existing');
      await runtime.close();
    }
    return env;
  }

  /** Runs `serve --demo`; resolves its address, its output so far and a tenant id, once it serves. */
  async function serveDemo(env: Record<string, string>): Promise<{ base: string; output: () => string; tenantId: string }> {
    const port = await freePort();
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, SLUICE_PORT: String(port), SLUICE_ADMIN_TOKEN: ADMIN };
    for (const key of Object.keys(childEnv))
      if (key.startsWith('SLUICE_') && !(key in env) && key !== 'SLUICE_PORT' && key !== 'SLUICE_ADMIN_TOKEN') delete childEnv[key];
    const child = spawn(process.execPath, ['--import', tsx, cli, 'serve', '--demo'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // Served, and the demo has said what it did (created a tenant, or found some).
    for (let i = 0; i < 300 && !/Demo tenant "demo" \(|already has tenants/.test(output); i++) {
      if (child.exitCode !== null) throw new Error(`serve --demo exited: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const base = `http://127.0.0.1:${port}`;
    const tenants = (await (await fetch(`${base}/v1/admin/tenants`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
      tenants: { id: string }[];
    };
    return { base, output: () => output, tenantId: tenants.tenants[0]!.id };
  }

  const subscribe = (base: string, tenantId: string, url: string) =>
    fetch(`${base}/v1/admin/tenants/${tenantId}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });

  it('on a database with tenants and SLUICE_WEBHOOK_ALLOW_PRIVATE=false, the guard holds: the metadata address is 400', async () => {
    const demo = await serveDemo({ ...(await database(true)), SLUICE_WEBHOOK_ALLOW_PRIVATE: 'false' });
    expect(demo.output()).toMatch(/already has tenants/);
    expect((await subscribe(demo.base, demo.tenantId, METADATA)).status).toBe(400);
    expect(demo.output()).not.toMatch(RELAXED);
  }, 60_000);

  it('on a database with tenants and no setting, the guard holds too (the demo created nothing)', async () => {
    const demo = await serveDemo(await database(true));
    expect((await subscribe(demo.base, demo.tenantId, METADATA)).status).toBe(400);
    expect(demo.output()).not.toMatch(RELAXED);
  }, 60_000);

  it('on a new database with SLUICE_WEBHOOK_ALLOW_PRIVATE=false given, the demo creates its tenant and the guard holds', async () => {
    const demo = await serveDemo({ ...(await database(false)), SLUICE_WEBHOOK_ALLOW_PRIVATE: 'false' });
    expect(demo.output()).toMatch(/Demo tenant "demo"/);
    expect((await subscribe(demo.base, demo.tenantId, 'http://127.0.0.1:9000/events')).status).toBe(400);
    expect(demo.output()).not.toMatch(RELAXED);
  }, 60_000);

  it('on a new database with no setting, the demo creates its tenant, allows its local endpoint, and says so', async () => {
    const demo = await serveDemo(await database(false));
    expect((await subscribe(demo.base, demo.tenantId, 'http://127.0.0.1:9000/events')).status).toBe(201);
    expect(demo.output()).toMatch(RELAXED);
  }, 60_000);
});

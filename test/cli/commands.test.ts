import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { cliArgs, sluice as runSluice } from '../support/cli.js';
import { freePort } from '../support/net.js';
import { type Server, startServer, stopInstance } from '../support/serve-instance.js';
import { until } from '../support/wait.js';

/**
 * The operator commands on one SQLite database, run in process as the executable runs them;
 * `send` goes through a running server, and `serve` is a real process.
 */
describe('sluice CLI', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
    SLUICE_ADMIN_TOKEN: 'cli-admin-secret',
    // The CLI changes the database behind the server's back: no cache, so the server sees them at once.
    SLUICE_CONFIG_CACHE_MS: '0',
  };
  let server: Server | undefined;
  afterAll(async () => {
    if (server) await stopInstance(server);
  });

  const attempt = (args: string[], extraEnv: Record<string, string> = {}) => runSluice(args, { ...env, ...extraEnv });
  const sluice = async (...args: string[]) => {
    const result = await attempt(args);
    if (result.code !== 0) throw new Error(`sluice ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };

  it('migrates, manages tenants and rules, sends through the server, and checks the config', async () => {
    expect(await sluice('migrate')).toMatch(/applied: 0001|up to date/);
    expect(await sluice('migrate')).toContain('up to date');

    const first = await attempt(['tenant', 'create', 'acme']);
    // The first command to need the secret key makes it, and says so on stderr; stdout stays the answer.
    expect(first.stderr).toContain('created a new secret key');
    // It says which rules the tenant starts with (SLUICE_NEW_TENANT_RULES), so sends are not unlimited unawares.
    expect(first.stderr).toContain(
      'Its sms and email rules (WINDOW_SECONDS:LIMIT:BAN_SECONDS, from SLUICE_NEW_TENANT_RULES): 60:3:600 3600:10:600 86400:50:600',
    );
    const tenant = JSON.parse(first.stdout) as { id: string; apiKey: string };
    expect(tenant.apiKey).toMatch(/^sk_/);
    expect(await sluice('tenant', 'list')).toContain('"name": "acme"');

    await sluice('rules', 'set', tenant.id, 'sms', '60:1:600', '3600:10');
    // The admin API's GET answer, in the shape its PUT takes.
    const shown = JSON.parse(await sluice('rules', 'show', tenant.id, 'sms')) as { rules: unknown[] };
    expect(shown).toEqual({
      channel: 'sms',
      rules: [
        { windowSeconds: 60, limit: 1, banSeconds: 600 },
        { windowSeconds: 3600, limit: 10, banSeconds: 0 },
      ],
      fallback: null,
      // Version 1 is the rules the tenant was created with (SLUICE_NEW_TENANT_RULES).
      version: 2,
    });
    expect((await attempt(['rules', 'set', tenant.id, 'sms', 'sixty:1'])).stderr).toContain('WINDOW_SECONDS:LIMIT');
    // Risk rules: JSON in, the admin API's GET answer out; a missing parameter is named.
    const risk = [{ name: 'per-phone', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 3 }];
    expect(JSON.parse(await sluice('risk', 'set', tenant.id, 'otp', JSON.stringify(risk)))).toEqual({
      action: 'otp',
      rules: risk,
      version: 1,
    });
    expect(JSON.parse(await sluice('risk', 'show', tenant.id, 'otp'))).toEqual({ action: 'otp', rules: risk, version: 1 });
    expect((await attempt(['risk', 'set', tenant.id, 'otp', '[{"name":"x","kind":"last-n","key":["user"],"n":5}]'])).stderr).toContain(
      'rules[0].m',
    );
    // A fallback is set with --fallback, kept by a later `rules set` without it, dropped by `default`.
    const withFallback = JSON.parse(
      await sluice('rules', 'set', tenant.id, 'email', '60:3', '--fallback', 'static', '--fallback-rule', '3600:10'),
    ) as { fallback: unknown };
    expect(withFallback.fallback).toEqual({ mode: 'static', rules: [{ windowSeconds: 3600, limit: 10, banSeconds: 0 }] });
    expect((JSON.parse(await sluice('rules', 'set', tenant.id, 'email', '60:5')) as { fallback: unknown }).fallback).toEqual(
      withFallback.fallback,
    );
    expect(
      (JSON.parse(await sluice('rules', 'set', tenant.id, 'email', '60:5', '--fallback', 'default')) as { fallback: unknown }).fallback,
    ).toBeNull();
    // Refused by the CLI's own schema check (the enum), before the admin service is asked.
    expect((await attempt(['rules', 'set', tenant.id, 'email', '60:5', '--fallback', 'sometimes'])).stderr).toContain(
      'INVALID_REQUEST: fallback.mode: must be one of local, static, allow, deny',
    );

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    expect(
      (await attempt(['send', '--url', url, '--key', tenant.apiKey, '--channel', 'sms', '--to', '13800138000', '--body', 'hi'])).stderr,
    ).toContain('UNAVAILABLE');
    server = await startServer({ ...env, SLUICE_PORT: String(port) }, { roles: 'api', cwd: dir, isolated: true });

    const sendArgs = (to: string) => ['send', '--url', url, '--key', tenant.apiKey, '--channel', 'sms', '--to', to, '--body', 'hi'];
    const send = (to: string) => attempt(sendArgs(to));
    const sent = await send('13800138000');
    expect(JSON.parse(sent.stdout)).toMatchObject({ status: 'queued' });
    const limited = await send('+8613800138000');
    expect(limited.code).toBe(1);
    expect(limited.stderr).toContain('RATE_LIMITED');
    // The refusal says how long to wait, as the API's Retry-After does.
    expect(limited.stderr).toMatch(/\(retry in [1-9]\d* s\)/);
    // A time without "T" and offset: the form expected, before anything is sent.
    const badTime = await attempt([...sendArgs('+8613800138002'), '--send-at', '2026-12-04 14:19']);
    expect(badTime.code).toBe(1);
    expect(badTime.stderr).toContain('2026-12-04T14:19:00+08:00');
    expect(badTime.stderr).not.toContain('format');
    // To the minute, as people write it: the seconds are supplied.
    const inAnHour = `${new Date(Date.now() + 3_600_000).toISOString().slice(0, 16)}Z`;
    const scheduled = await attempt([...sendArgs('+8613800138003'), '--send-at', inAnHour]);
    expect(scheduled.stderr).toBe('');
    expect(JSON.parse(scheduled.stdout)).toMatchObject({ status: 'scheduled' });

    expect(await sluice('tenant', 'suspend', tenant.id)).toContain('suspended');
    expect((await send('+8613800138001')).stderr).toContain('TENANT_SUSPENDED');

    const config = await sluice('config', 'check');
    expect(config).toContain('SLUICE_ADMIN_TOKEN=***');
    expect(config).not.toContain('cli-admin-secret');
    expect(config).toContain('settings OK');
    const bad = await attempt(['config', 'check'], { SLUICE_PORT: 'eighty' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('SLUICE_PORT must be an integer');
    // A misspelled variable is named even when another setting is bad (it may be the reason).
    const misspelled = await attempt(['config', 'check'], { SLUICE_PROT: '3001', SLUICE_PORT: 'eighty' });
    expect(misspelled.code).toBe(1);
    expect(misspelled.stderr).toContain('SLUICE_PROT is not a sluice setting');
    expect(misspelled.stderr).toContain('SLUICE_PORT must be an integer');
  });

  /** Refused like the API refuses it: one line naming the problem, exit 1, no stack trace. */
  const refused = async (args: string[], expected: string, extraEnv: Record<string, string> = {}) => {
    const result = await attempt(args, extraEnv);
    expect(result.code, `sluice ${args.join(' ')}`).toBe(1);
    expect(result.stderr).toContain(expected);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    return result;
  };

  it('refuses bad input as the admin API does, in one line, exit 1', async () => {
    await sluice('migrate');
    const tenant = JSON.parse(await sluice('tenant', 'create', 'bad-input')) as { id: string };
    await refused(['tenant', 'create', 'x', '--qps', '0'], 'INVALID_REQUEST: qpsLimit: Expected integer to be greater or equal to 1');
    await refused(['tenant', 'create', 'x', '--qps', '1.5'], 'not an integer');
    // More than the limiter can count: refused, not stored to fail every send with a 503.
    await refused(
      ['tenant', 'create', 'q9', '--qps', '5000000000'],
      'INVALID_REQUEST: qpsLimit: Expected integer to be less or equal to 1000000',
    );
    await refused(['tenant', 'create', ''], 'INVALID_REQUEST: name');
    await refused(['rules', 'show', 'no-such-tenant', 'sms'], 'NOT_FOUND');
    await refused(['rules', 'set', 'no-such-tenant', 'sms', '60:3'], 'NOT_FOUND');
    await refused(['rules', 'set', tenant.id, 'fax', '60:3'], '"fax" is not a channel');
    await refused(['rules', 'set', tenant.id, 'sms', '60:3:0:leaky'], 'INVALID_REQUEST: rules[0].algorithm');
    // A well-formed rule with a value out of range names the value, in the API's one-line form.
    const zero = await refused(['rules', 'set', tenant.id, 'sms', '60:3', '60:0:0'], 'INVALID_REQUEST: rules[1].limit');
    expect(zero.stderr).not.toContain('WINDOW_SECONDS');
    await refused(
      ['rules', 'set', tenant.id, 'sms', '60:3', 'sixty:1'],
      'INVALID_REQUEST: rules[1]: "sixty:1" is not WINDOW_SECONDS:LIMIT',
    );
    await refused(['rules', 'set', tenant.id, 'sms', '60:3:0:sliding-log:x'], 'is not WINDOW_SECONDS:LIMIT');
    const console4 = ['provider', 'add', '--scope', '*', '--channel', 'sms', '--kind', 'console', '--name', 'c4'];
    await refused([...console4, '--qps', '-1'], 'INVALID_REQUEST: qps');
    await refused([...console4, '--qps', '5', '--secret-file', join(dir, 'missing.json')], 'cannot read --secret-file');
    await refused([...console4, '--qps', '5', '--secret-env', 'SLUICE_TEST_UNSET'], 'SLUICE_TEST_UNSET is not set');
    await refused(['migrate'], 'configuration: SLUICE_DB_URL must start with sqlite:', { SLUICE_DB_URL: 'foo:bar' });
    // With two addresses for `localhost`, Node reports the refusals as an AggregateError without a message.
    await refused(['migrate'], 'ECONNREFUSED', { SLUICE_DB_URL: `postgres://sluice@localhost:${await freePort()}/none` });
  });

  it('provider add takes the provider settings as --provider-config JSON', async () => {
    await sluice('migrate');
    const secret = join(dir, 'smtp-secret.json');
    writeFileSync(secret, JSON.stringify({ user: 'u', password: 'p' }));
    const smtp = ['provider', 'add', '--scope', '*', '--channel', 'email', '--kind', 'smtp', '--qps', '10', '--secret-file', secret];
    const created = JSON.parse(
      await sluice(...smtp, '--name', 'mail1', '--provider-config', '{"host":"127.0.0.1","port":2525,"from":"a@example.com"}'),
    ) as {
      name: string;
      config: unknown;
    };
    expect(created).toMatchObject({ name: 'mail1', config: { host: '127.0.0.1', port: 2525, from: 'a@example.com' } });
    // A name is unique in its scope and channel, as the admin API has it.
    await refused(
      [...smtp, '--name', 'mail1', '--provider-config', '{"host":"127.0.0.1","port":2525,"from":"a@example.com"}'],
      'CONFLICT: an email provider named "mail1" already exists for every tenant',
    );
    // A provider the client cannot be built from is named by its name in the error.
    await refused([...smtp, '--name', 'mail2', '--provider-config', '{"port":2525,"from":"a@example.com"}'], 'provider "mail2"');
    await refused([...smtp, '--name', 'mail3', '--provider-config', '{"host":'], '--provider-config is not valid JSON');
    // A misspelt setting is refused rather than left at its default.
    await refused(
      [...smtp, '--name', 'mail4', '--provider-config', '{"host":"h","from":"a@example.com","timeOutMs":5}'],
      'config.timeOutMs is not read',
    );
  });

  it('template set, show, list and remove manage templates as the admin API does', async () => {
    await sluice('migrate');
    const tenant = JSON.parse(await sluice('tenant', 'create', 'templated')) as { id: string };
    const set = (...args: string[]) => sluice('template', 'set', tenant.id, 'sms', 'otp', ...args);
    const first = JSON.parse(await set('--param', 'code:string:8', '--body', 'Your code is {{code}}', '--vendor', 'aliyun-sms:SMS_1:Shop'));
    expect(first).toMatchObject({
      version: 1,
      params: { code: { type: 'string', maxLength: 8 } },
      vendor: { 'aliyun-sms': { templateCode: 'SMS_1', signName: 'Shop' } },
    });
    expect(JSON.parse(await set('--json', '{"params":{"code":{"type":"string"}},"body":"Code {{code}}"}')).version).toBe(2);
    const versions = JSON.parse(await sluice('template', 'show', tenant.id, 'sms', 'otp')) as { version: number }[];
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    expect((JSON.parse(await sluice('template', 'list', tenant.id)) as { name: string }[]).map((v) => v.name)).toEqual(['otp']);
    await refused(['template', 'set', tenant.id, 'sms', 'bad', '--body', 'Hi {{who}}'], 'not a declared param');
    expect(JSON.parse(await sluice('template', 'remove', tenant.id, 'sms', 'otp'))).toMatchObject({ retired: true });
    await refused(['template', 'remove', tenant.id, 'sms', 'otp'], 'NOT_FOUND');
  });

  it('provider update changes only what is given, checked as the admin API checks a PATCH', async () => {
    await sluice('migrate');
    const added = await sluice(
      ...['provider', 'add', '--scope', '*', '--channel', 'email', '--kind', 'console', '--name', 'printer', '--qps', '10'],
      ...['--provider-config', '{"timeoutMs":2525}'],
    );
    const id = (JSON.parse(added) as { id: string }).id;
    const updated = JSON.parse(await sluice('provider', 'update', id, '--qps', '20', '--priority', '3', '--disable'));
    expect(updated).toMatchObject({ name: 'printer', qps: 20, priority: 3, enabled: false, config: { timeoutMs: 2525 } });
    const renamed = JSON.parse(await sluice('provider', 'update', id, '--provider-config', '{}', '--enable', '--name', 'printer2'));
    expect(renamed).toMatchObject({ name: 'printer2', qps: 20, enabled: true, config: {} });
    await refused(['provider', 'update', id], 'nothing to change');
    await refused(['provider', 'update', id, '--enable', '--disable'], 'not both');
    await refused(['provider', 'update', id, '--provider-config', '{"timeOutMs":1}'], 'config.timeOutMs is not read');
    await refused(['provider', 'update', 'no-such-id', '--qps', '5'], 'NOT_FOUND: no provider no-such-id');
  });

  it('provider receipt-token prints a new token and the path for the vendor, only for SMS kinds that push receipts', async () => {
    await sluice('migrate');
    const secret = join(dir, 'aliyun.json');
    writeFileSync(secret, JSON.stringify({ accessKeyId: 'id', accessKeySecret: 'secret' }));
    const added = await sluice(
      ...['provider', 'add', '--scope', '*', '--channel', 'sms', '--kind', 'aliyun-sms', '--name', 'ali', '--qps', '10'],
      ...['--provider-config', '{"signName":"sluice","templateCode":"SMS_1"}', '--secret-file', secret],
    );
    const id = (JSON.parse(added) as { id: string }).id;
    const issued = JSON.parse(await sluice('provider', 'receipt-token', id)) as { token: string; path: string };
    expect(issued.path).toBe(`/v1/receipts/${id}?token=${issued.token}`);
    expect(issued.token).toMatch(/^[\w-]{40,}$/);
    const console = await sluice(
      'provider',
      'add',
      '--scope',
      '*',
      '--channel',
      'sms',
      '--kind',
      'console',
      '--name',
      'printer',
      '--qps',
      '10',
    );
    await refused(['provider', 'receipt-token', (JSON.parse(console) as { id: string }).id], 'pushes no delivery receipts');
    await refused(['provider', 'receipt-token', 'no-such-id'], 'NOT_FOUND: no provider no-such-id');
  });

  it('tenant new-key, keys and revoke-key manage API keys as the admin API does', async () => {
    await sluice('migrate');
    const tenant = JSON.parse(await sluice('tenant', 'create', 'rotating')) as { id: string; apiKey: string };
    type Keys = { keys: { id: string; revokedAt: string | null }[] };
    const [first] = (JSON.parse(await sluice('tenant', 'keys', tenant.id)) as Keys).keys;
    // Without a flag the other keys keep working (revoking is the explicit choice), and it says so.
    const issued = await attempt(['tenant', 'new-key', tenant.id]);
    expect(issued.stderr).toContain('shown once');
    expect(issued.stderr).toContain(`other keys still work (${first!.id} `);
    const second = JSON.parse(issued.stdout) as { keyId: string; apiKey: string };
    expect(second.apiKey).toMatch(/^sk_/);
    expect(await sluice('tenant', 'revoke-key', tenant.id, second.keyId)).toContain(`revoked ${second.keyId}`);
    const { keys } = JSON.parse(await sluice('tenant', 'keys', tenant.id)) as Keys;
    expect(keys.map((key) => [key.id === second.keyId, key.revokedAt === null])).toEqual([
      [false, true],
      [true, false],
    ]);
    await refused(['tenant', 'revoke-key', tenant.id, second.keyId], `NOT_FOUND: tenant ${tenant.id} has no active key`);
    // --keep-others still works (the default now); --revoke-others revokes the rest at once.
    expect((await attempt(['tenant', 'new-key', tenant.id, '--keep-others'])).code).toBe(0);
    const third = JSON.parse(await sluice('tenant', 'new-key', tenant.id, '--revoke-others')) as { keyId: string };
    const after = (JSON.parse(await sluice('tenant', 'keys', tenant.id)) as Keys).keys;
    expect(after.filter((key) => key.revokedAt === null).map((key) => key.id)).toEqual([third.keyId]);
    await refused(
      ['tenant', 'new-key', tenant.id, '--revoke-others', '--keep-others'],
      'INVALID_REQUEST: give --revoke-others or --keep-others',
    );
  });

  it("blacklist add, remove and list a tenant's list or the global one (--global), checked as the API checks them", async () => {
    await sluice('migrate');
    const tenant = JSON.parse(await sluice('tenant', 'create', 'blacklisting')) as { id: string };
    const added = JSON.parse(await sluice('blacklist', 'add', '--global', '--channel', 'sms', '13800138099', 'not a phone'));
    expect(added).toEqual({ added: ['+8613800138099'], invalid: ['not a phone'] });
    expect(
      JSON.parse(await sluice('blacklist', 'add', tenant.id, '--reason', 'asked to stop', 'Quiet@Example.com', 'b@example.com')).added,
    ).toEqual(['quiet@example.com', 'b@example.com']);

    const global = JSON.parse(await sluice('blacklist', 'list', '--global'));
    expect(global).toEqual({
      entries: [{ channel: 'sms', recipient: '+8613800138099', reason: null, createdAt: expect.any(String) }],
      next: null,
    });
    const first = JSON.parse(await sluice('blacklist', 'list', tenant.id, '--limit', '1'));
    // Stored under their keys (case-folded), listed in the keys' order.
    expect(first.entries).toEqual([{ channel: '*', recipient: 'b@example.com', reason: 'asked to stop', createdAt: expect.any(String) }]);
    const second = JSON.parse(await sluice('blacklist', 'list', tenant.id, '--limit', '1', '--after', first.next));
    expect(second.entries.map((entry: { recipient: string }) => entry.recipient)).toEqual(['quiet@example.com']);

    expect(JSON.parse(await sluice('blacklist', 'remove', '--global', '--channel', 'sms', '+8613800138099'))).toEqual({
      removed: 1,
      invalid: [],
    });
    expect(JSON.parse(await sluice('blacklist', 'list', '--global')).entries).toEqual([]);

    await refused(['blacklist', 'add', 'x@example.com'], 'INVALID_REQUEST: recipients');
    await refused(['blacklist', 'list'], 'INVALID_REQUEST: name a TENANT, or pass --global');
    await refused(['blacklist', 'list', tenant.id, '--global'], 'INVALID_REQUEST: either TENANT');
    await refused(['blacklist', 'add', tenant.id, '--channel', 'fax', 'x@example.com'], 'INVALID_REQUEST: channel');
    await refused(['blacklist', 'remove', 'no-such-tenant', 'x@example.com'], 'NOT_FOUND');
    await refused(['blacklist', 'list', '--global', '--limit', '0'], 'INVALID_REQUEST: limit');
  });

  it("webhook add, list, update, remove and replay work on a tenant's endpoints as the admin API does", async () => {
    const tenant = JSON.parse(await sluice('tenant', 'create', `hooks-${Date.now()}`)) as { id: string };
    const refused = await attempt(['webhook', 'add', tenant.id, 'http://127.0.0.1:9/hook']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SLUICE_WEBHOOK_ALLOW_PRIVATE');
    const added = await attempt(['webhook', 'add', tenant.id, 'http://127.0.0.1:9/hook', '--events', 'message.sent,message.failed'], {
      SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    expect(added.code, added.stderr).toBe(0);
    const created = JSON.parse(added.stdout) as { id: string; secret: string; events: string[] };
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.events).toEqual(['message.sent', 'message.failed']);
    const listed = await sluice('webhook', 'list', tenant.id);
    expect(listed).toContain(created.id);
    expect(listed).not.toContain(created.secret);
    const updated = JSON.parse(await sluice('webhook', 'update', tenant.id, created.id, '--disable', '--rotate-secret')) as {
      enabled: boolean;
      secret: string;
    };
    expect(updated.enabled).toBe(false);
    expect(updated.secret).not.toBe(created.secret);
    expect(JSON.parse(await sluice('webhook', 'replay', tenant.id, created.id))).toEqual([]);
    expect((await attempt(['webhook', 'replay', tenant.id, created.id, 'evt_unknown'])).code).toBe(1);
    expect(await sluice('webhook', 'remove', tenant.id, created.id)).toContain('removed');
    expect((await attempt(['webhook', 'remove', tenant.id, created.id])).code).toBe(1);
  });

  it('serve --roles worker answers its probes and metrics, and no API route', async () => {
    const worker = await startServer(env, { roles: 'worker', cwd: dir, isolated: true });
    const { url } = worker;
    try {
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      // Its dispatchers' metrics: the embedded locks are its own.
      const holds = async () => (await (await fetch(`${url}/metrics`)).text()).includes('sluice_lock_held{partition="sms:0"} 1');
      await until(holds, { timeoutMs: 5000, what: 'the worker holding partition sms:0' });
      const api = await fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(api.status).toBe(404);
      expect(((await api.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    } finally {
      await stopInstance(worker);
    }
  });

  // A real process: its dispatchers would log on standard output.
  it('serve on a port in use says so and exits 1, without starting its dispatchers', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const result = await promisify(execFile)(process.execPath, [...cliArgs, 'serve'], {
        env: { ...env, PATH: process.env.PATH ?? '', SLUICE_PORT: String(port), SLUICE_LOG_LEVEL: 'info' },
        cwd: dir,
      }).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('the address is in use');
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stdout).not.toContain('dispatcher holds its partition');
    } finally {
      taken.close();
    }
  });
});

#!/usr/bin/env node
/**
 * The `sluice` command: serve, migrate, tenant, rules, send, config check. Operator commands work
 * directly on the database (no admin token needed), through the same services as the admin API.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import pino from 'pino';
import { createRuntime, type Runtime } from '../app/runtime.js';
import { CHANNELS, type Channel, isChannel } from '../channels.js';
import { describeSettings, loadSettings, SettingsError } from '../config/settings.js';
import { ERROR_CODES, type ErrorCode, SluiceError } from '../errors.js';
import { openDatabase } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrations/index.js';
import { serve } from './serve.js';

const program = new Command('sluice')
  .description('Message service with exact frequency control')
  .option('-c, --config <file>', 'JSON settings file (keys are SLUICE_* names)');

const settingsOf = () => loadSettings(process.env, program.opts().config ?? process.env.SLUICE_CONFIG);

/** Runs `work` on a runtime made for one command (quiet logs, no HTTP), then closes it. */
async function withRuntime<T>(work: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = await createRuntime(settingsOf(), { logger: pino({ level: 'warn' }) });
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

const channelArg = (value: string): Channel => {
  if (!isChannel(value)) throw new InvalidArgumentError(`use one of ${CHANNELS.join(', ')}`);
  return value;
};

/** `60:3:600` or `60:3` or `60:3:600:sliding-counter` → a rule (seconds). */
const parseRule = (spec: string) => {
  const [window, limit, ban = '0', algorithm] = spec.split(':');
  const rule = { windowSeconds: Number(window), limit: Number(limit), banSeconds: Number(ban), ...(algorithm ? { algorithm } : {}) };
  if (
    ![rule.windowSeconds, rule.limit, rule.banSeconds].every((n) => Number.isInteger(n) && n >= 0) ||
    rule.windowSeconds < 1 ||
    rule.limit < 1
  ) {
    throw new InvalidArgumentError(`"${spec}" is not WINDOW_SECONDS:LIMIT[:BAN_SECONDS[:ALGORITHM]]`);
  }
  return rule;
};

program
  .command('serve')
  .description('Run the HTTP API and/or the dispatchers (SLUICE_ROLES, default both)')
  .option('--roles <roles>', 'api, worker or api,worker (overrides SLUICE_ROLES)')
  .option('--demo', 'on a new database, create a demo tenant with the seed rules and print its key')
  .action(async (options: { roles?: string; demo?: boolean }) => {
    if (options.roles) process.env.SLUICE_ROLES = options.roles;
    await serve(settingsOf(), { demo: options.demo ?? false });
  });

program
  .command('migrate')
  .description('Apply pending database migrations')
  .action(async () => {
    const database = await openDatabase(settingsOf().dbUrl);
    try {
      const applied = await migrateToLatest(database);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
    } finally {
      await database.close();
    }
  });

const tenant = program.command('tenant').description('Create, list and suspend tenants');
tenant
  .command('create <name>')
  .option('--qps <n>', 'tenant requests per second', (value) => Number.parseInt(value, 10))
  .action((name: string, options: { qps?: number }) =>
    withRuntime(async (runtime) => {
      const created = await runtime.http.admin.createTenant(name, options.qps ?? null);
      console.log(JSON.stringify(created, null, 2));
      console.error('The API key is shown once: keep it now.');
    }),
  );
tenant
  .command('list')
  .action(() => withRuntime(async (runtime) => console.log(JSON.stringify(await runtime.http.admin.listTenants(), null, 2))));
for (const [command, status] of [
  ['suspend', 'suspended'],
  ['resume', 'active'],
] as const) {
  tenant.command(`${command} <id>`).action((id: string) =>
    withRuntime(async (runtime) => {
      const updated = await runtime.http.admin.updateTenant(id, { status });
      if (!updated) throw new SluiceError('NOT_FOUND', `no tenant ${id}`);
      console.log(`${updated.name} (${updated.id}) is ${updated.status}`);
    }),
  );
}

const rules = program.command('rules').description("Set or show a tenant channel's frequency rules");
rules
  .command('set <tenantId> <channel> <rules...>')
  .description('Replace the rules, e.g.: rules set TENANT sms 60:3:600 3600:10 86400:50 (WINDOW_S:LIMIT[:BAN_S[:ALGORITHM]])')
  .action((tenantId: string, channel: string, specs: string[]) =>
    withRuntime(async (runtime) => {
      const set = await runtime.http.admin.setRules(tenantId, channelArg(channel), specs.map(parseRule));
      console.log(JSON.stringify(set, null, 2));
    }),
  );
rules
  .command('show <tenantId> <channel>')
  .action((tenantId: string, channel: string) =>
    withRuntime(async (runtime) => console.log(JSON.stringify(await runtime.http.admin.getRules(tenantId, channelArg(channel)), null, 2))),
  );

const provider = program.command('provider').description('Register, list and remove delivery providers');
provider
  .command('add')
  .description('Register a provider; credentials are read from a JSON file or an environment variable, never from the command line')
  .requiredOption('--scope <scope>', 'tenant id, or * for every tenant')
  .requiredOption('--channel <channel>', 'sms, email or webhook', channelArg)
  .requiredOption('--kind <kind>', 'console, smtp, aliyun-sms, tencent-sms, feishu, slack or http')
  .requiredOption('--name <name>')
  .requiredOption('--qps <n>', "the vendor's QPS contract", (value) => Number.parseInt(value, 10))
  .option('--priority <n>', 'lower is tried first', (value) => Number.parseInt(value, 10))
  .option('--config <json>', 'non-secret settings as JSON, e.g. {"host":"smtp.example.com","port":465}')
  .option('--secret-file <path>', 'JSON object of credentials')
  .option('--secret-env <variable>', 'environment variable holding the JSON object of credentials')
  .action((options) =>
    withRuntime(async (runtime) => {
      const secretText = options.secretFile
        ? readFileSync(options.secretFile, 'utf8')
        : options.secretEnv
          ? process.env[options.secretEnv]
          : undefined;
      const created = await runtime.http.admin.createProvider({
        scope: options.scope,
        channel: options.channel,
        kind: options.kind,
        name: options.name,
        qps: options.qps,
        ...(options.priority === undefined ? {} : { priority: options.priority }),
        ...(options.config ? { config: JSON.parse(options.config) as Record<string, unknown> } : {}),
        ...(secretText ? { secret: JSON.parse(secretText) as Record<string, string> } : {}),
      });
      console.log(JSON.stringify(created, null, 2));
    }),
  );
provider
  .command('list')
  .option('--scope <scope>')
  .option('--channel <channel>', 'sms, email or webhook', channelArg)
  .action((options: { scope?: string; channel?: Channel }) =>
    withRuntime(async (runtime) => console.log(JSON.stringify(await runtime.http.admin.listProviders(options), null, 2))),
  );
provider.command('remove <id>').action((id: string) =>
  withRuntime(async (runtime) => {
    if (!(await runtime.http.admin.deleteProvider(id))) throw new SluiceError('NOT_FOUND', `no provider ${id}`);
    console.log(`removed ${id}`);
  }),
);

program
  .command('send')
  .description(
    'Send a message through the running service (POST /v1/messages), so its limiter counts it like any other: ' +
      'the embedded default keeps recipient counts in the serving process',
  )
  .requiredOption('--key <apiKey>', 'tenant API key (or SLUICE_API_KEY)', process.env.SLUICE_API_KEY)
  .requiredOption('--channel <channel>', 'sms, email or webhook', channelArg)
  .requiredOption('--to <recipient>')
  .option('--url <url>', 'base URL of the service (default: http://SLUICE_HOST:SLUICE_PORT)')
  .option('--template <template>')
  .option('--param <name=value...>', 'template parameter (repeatable)')
  .option('--subject <subject>')
  .option('--body <body>')
  .option('--html <html>')
  .option('--send-at <time>', 'ISO 8601 time to send at')
  .option('--idempotency-key <key>')
  .action(async (options) => {
    const settings = settingsOf();
    const base = options.url ?? `http://${settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host}:${settings.port}`;
    const params = options.param
      ? Object.fromEntries((options.param as string[]).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]))
      : undefined;
    const body = {
      channel: options.channel,
      to: options.to,
      template: options.template,
      params,
      subject: options.subject,
      body: options.body,
      html: options.html,
      sendAt: options.sendAt,
    };
    let response: Response;
    try {
      response = await fetch(new URL('/v1/messages', base), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${options.key}`,
          'Content-Type': 'application/json',
          ...(options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {}),
        },
        body: JSON.stringify(body),
      });
    } catch (error) {
      throw new SluiceError(
        'UNAVAILABLE',
        `no sluice answers at ${base} (start it with \`sluice serve\`, or pass --url): ${(error as Error).message}`,
      );
    }
    const answer = (await response.json()) as { id?: string; status?: string; error?: { code: ErrorCode; message: string } };
    if (answer.error) throw new SluiceError(answer.error.code in ERROR_CODES ? answer.error.code : 'INTERNAL', answer.error.message);
    console.log(JSON.stringify(answer));
  });

program
  .command('config')
  .description('Configuration')
  .command('check')
  .description('Validate the settings and print them, secrets masked')
  .action(() => {
    for (const line of describeSettings(settingsOf())) console.log(line);
    console.log('settings OK');
  });

program.parseAsync().catch((error: unknown) => {
  if (error instanceof SluiceError) console.error(`${error.code}: ${error.message}`);
  else if (error instanceof SettingsError) console.error(`configuration: ${error.message}`);
  else console.error(error);
  process.exitCode = 1;
});

#!/usr/bin/env node
/**
 * The `sluice` command: serve, migrate, tenant, rules, blacklist, provider, send, config check. Operator commands work
 * directly on the database (no admin token needed), through the same services as the admin API.
 */
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import pino from 'pino';
import { CHANNELS, type Channel, isChannel } from '../core/channels.js';
import { ERROR_CODES, type ErrorCode, jsonSyntaxProblem, SluiceError } from '../core/errors.js';
import {
  BlacklistBody,
  BlacklistQuery,
  BlacklistRemoveBody,
  NewProviderBody,
  NewTenantBody,
  ProviderPatchBody,
  RuleSetBody,
} from '../http/schemas.js';
import { loggerOptions } from '../infra/logging.js';
import { createRuntime, type Runtime } from '../main/runtime.js';
import type { FallbackView, TenantDetails } from '../services/contracts.js';
import { describeSettings, loadSettings, SettingsError, unknownVariables } from '../settings/settings.js';
import { openDatabase } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrations/index.js';
import { serve } from './serve.js';
import { checkBody } from './validation.js';

const program = new Command('sluice')
  .description('Message service with exact frequency control')
  .option('-c, --config <file>', 'JSON settings file (keys are SLUICE_* names)');

const settingsOf = () => loadSettings(process.env, program.opts().config ?? process.env.SLUICE_CONFIG);

/** Runs `work` on a runtime made for one command (quiet logs, no HTTP), then closes it. */
async function withRuntime<T>(work: (runtime: Runtime) => Promise<T>): Promise<T> {
  // Logs on stderr: stdout carries the command's answer (JSON a script may parse).
  const runtime = await createRuntime(settingsOf(), { logger: pino(loggerOptions('warn'), pino.destination(2)) });
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

const channelArg = (value: string): Channel => {
  if (!isChannel(value)) throw new InvalidArgumentError(`"${value}" is not a channel: use one of ${CHANNELS.join(', ')}`);
  return value;
};

/** Digits only: `parseInt` would read `1.5` as 1 and `abc` as NaN. The range is the API schema's. */
const integerArg = (value: string): number => {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer');
  return Number(value);
};

/** A JSON object from an option's text; `what` names the option in the error. */
function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SluiceError('INVALID_REQUEST', `${what} is ${jsonSyntaxProblem(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new SluiceError('INVALID_REQUEST', `${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The credentials of `provider add`: from a file or an environment variable, never the command line. */
function readSecret(options: { secretFile?: string; secretEnv?: string }): Record<string, unknown> | undefined {
  if (options.secretFile) {
    let text: string;
    try {
      text = readFileSync(options.secretFile, 'utf8');
    } catch (error) {
      throw new SluiceError(
        'INVALID_REQUEST',
        `cannot read --secret-file ${options.secretFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    return parseJsonObject(text, `--secret-file ${options.secretFile}`);
  }
  if (options.secretEnv) {
    const text = process.env[options.secretEnv];
    if (text === undefined || text === '')
      throw new SluiceError('INVALID_REQUEST', `--secret-env: the environment variable ${options.secretEnv} is not set`);
    return parseJsonObject(text, `--secret-env ${options.secretEnv}`);
  }
  return undefined;
}

/**
 * `60:3:600` or `60:3` or `60:3:600:sliding-counter` → a rule (seconds). Only the form is checked
 * here; the values (limit 0, an unknown algorithm) are the API schema's, so `60:0:0` is refused
 * for its limit, like the API refuses it, not as a malformed rule.
 */
const parseRule = (spec: string, index: number) => {
  const parts = spec.split(':');
  const [window, limit, ban = '0', algorithm] = parts;
  const numbers = [window, limit, ban].map((part) => (part !== undefined && /^-?\d+$/.test(part) ? Number(part) : undefined));
  if (parts.length < 2 || parts.length > 4 || numbers.includes(undefined) || algorithm === '') {
    throw new SluiceError('INVALID_REQUEST', `rules[${index}]: "${spec}" is not WINDOW_SECONDS:LIMIT[:BAN_SECONDS[:ALGORITHM]]`);
  }
  const [windowSeconds, limitValue, banSeconds] = numbers as [number, number, number];
  return { windowSeconds, limit: limitValue, banSeconds, ...(algorithm ? { algorithm } : {}) };
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
    const settings = settingsOf();
    const database = await openDatabase(settings.dbUrl);
    try {
      const applied = await migrateToLatest(database, { defaultRegion: settings.defaultRegion });
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
    } finally {
      await database.close();
    }
  });

const tenant = program.command('tenant').description('Create, list, suspend and resume tenants; issue and revoke their API keys');
tenant
  .command('create <name>')
  .option('--qps <n>', 'tenant requests per second', integerArg)
  .action((name: string, options: { qps?: number }) =>
    withRuntime(async (runtime) => {
      const body = await checkBody(NewTenantBody, { name, ...(options.qps === undefined ? {} : { qpsLimit: options.qps }) });
      const created = await runtime.http.admin.createTenant(body.name, body.qpsLimit ?? null);
      console.log(JSON.stringify(created, null, 2));
      console.error('The API key is shown once: keep it now.');
    }),
  );
tenant
  .command('list')
  .description('Every tenant, by id (creation order)')
  .action(() =>
    withRuntime(async (runtime) => {
      const tenants: TenantDetails[] = [];
      let after: string | undefined;
      do {
        const page = await runtime.http.admin.listTenants({ limit: 1000, ...(after === undefined ? {} : { after }) });
        tenants.push(...page.tenants);
        after = page.next ?? undefined;
      } while (after !== undefined);
      console.log(JSON.stringify(tenants, null, 2));
    }),
  );
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

tenant
  .command('keys <id>')
  .description("List a tenant's API keys (their first characters, never the keys)")
  .action((id: string) =>
    withRuntime(async (runtime) => {
      const keys = await runtime.http.admin.listApiKeys(id);
      if (!keys) throw new SluiceError('NOT_FOUND', `no tenant ${id}`);
      console.log(JSON.stringify({ keys }, null, 2));
    }),
  );
tenant
  .command('new-key <id>')
  .description("Issue a new API key, shown once; the tenant's other keys are revoked at once unless --keep-others")
  .option('--keep-others', 'keep the other keys working, for a rollover (revoke them later with revoke-key)')
  .action((id: string, options: { keepOthers?: boolean }) =>
    withRuntime(async (runtime) => {
      const issued = await runtime.http.admin.issueApiKey(id, { keepOthers: options.keepOthers ?? false });
      if (!issued) throw new SluiceError('NOT_FOUND', `no tenant ${id}`);
      console.log(JSON.stringify(issued, null, 2));
      console.error('The API key is shown once: keep it now.');
    }),
  );
tenant
  .command('revoke-key <id> <keyId>')
  .description('Revoke one API key')
  .action((id: string, keyId: string) =>
    withRuntime(async (runtime) => {
      if (!(await runtime.http.admin.revokeApiKey(id, keyId)))
        throw new SluiceError('NOT_FOUND', `tenant ${id} has no active key ${keyId}`);
      console.log(`revoked ${keyId}`);
    }),
  );

/** Commander's accumulator for a repeated option. */
const collect = (value: string, previous: string[]) => [...previous, value];

const rules = program.command('rules').description("Set or show a tenant channel's frequency rules");
rules
  .command('set <tenantId> <channel> <rules...>')
  .description(
    'Replace the rules, e.g.: rules set TENANT sms 60:3:600 3600:10 86400:50 (WINDOW_S:LIMIT[:BAN_S[:ALGORITHM]]). ' +
      'The fallback while Redis is away stays as it is unless --fallback is given.',
  )
  .option('--fallback <mode>', 'local, static, allow, deny, or default (the service default, SLUICE_FALLBACK_MODE)')
  .option('--fallback-rule <rule>', 'a static fallback rule, WINDOW_S:LIMIT[:BAN_S[:ALGORITHM]]; repeat for more', collect, [])
  .action((tenantId: string, channel: string, specs: string[], options: { fallback?: string; fallbackRule: string[] }) =>
    withRuntime(async (runtime) => {
      const admin = runtime.http.admin;
      if (options.fallbackRule.length > 0 && options.fallback !== 'static') {
        throw new SluiceError('INVALID_REQUEST', '--fallback-rule goes with --fallback static');
      }
      // Without --fallback the stored one is kept: replacing the rules must not drop a fallback
      // set through the API.
      const fallback =
        options.fallback === undefined
          ? (await admin.getRules(tenantId, channelArg(channel))).fallback
          : options.fallback === 'default'
            ? null
            : {
                mode: options.fallback,
                ...(options.fallbackRule.length ? { rules: options.fallbackRule.map((spec, index) => parseRule(spec, index)) } : {}),
              };
      const body = await checkBody(RuleSetBody, { rules: specs.map((spec, index) => parseRule(spec, index)), fallback });
      const set = await admin.setRules(tenantId, channelArg(channel), body.rules, body.fallback as FallbackView | null);
      console.log(JSON.stringify(set, null, 2));
    }),
  );
rules
  .command('show <tenantId> <channel>')
  .action((tenantId: string, channel: string) =>
    withRuntime(async (runtime) => console.log(JSON.stringify(await runtime.http.admin.getRules(tenantId, channelArg(channel)), null, 2))),
  );

/**
 * Whose list a blacklist command works on: `--global`, or the tenant named by the first argument
 * (the rest are recipients). Refused when it is both or neither.
 */
function blacklistTarget(args: string[], options: { global?: boolean }, needsRecipients: boolean) {
  const [first, ...rest] = args;
  if (options.global) return { scope: 'global' as const, recipients: args };
  if (first === undefined) throw new SluiceError('INVALID_REQUEST', 'name a TENANT, or pass --global for the list of every tenant');
  if (!needsRecipients && rest.length > 0) throw new SluiceError('INVALID_REQUEST', `one TENANT only, not also ${rest.join(' ')}`);
  return { scope: { tenant: first }, recipients: rest };
}

const blacklist = program
  .command('blacklist')
  .description("Add, remove and list blacklisted recipients: a tenant's (TENANT) or every tenant's (--global)");
const CHANNEL_OR_ALL = 'sms, email, webhook or * (every channel, the default)';
blacklist
  .command('add <args...>')
  .usage('(TENANT | --global) [--channel C] [--reason TEXT] RECIPIENT...')
  .description('Blacklist recipients; each is normalised as sends are (a national phone number gets the default region)')
  .option('--global', "every tenant's list")
  .option('--channel <channel>', CHANNEL_OR_ALL)
  .option('--reason <text>')
  .action((args: string[], options: { global?: boolean; channel?: string; reason?: string }) =>
    withRuntime(async (runtime) => {
      const { scope, recipients } = blacklistTarget(args, options, true);
      const body = await checkBody(BlacklistBody, {
        channel: options.channel ?? '*',
        recipients,
        ...(options.reason === undefined ? {} : { reason: options.reason }),
      });
      const added = await runtime.http.admin.addToBlacklist(scope, body.channel as Channel | '*', body.recipients, body.reason);
      console.log(JSON.stringify(added, null, 2));
    }),
  );
blacklist
  .command('remove <args...>')
  .usage('(TENANT | --global) [--channel C] RECIPIENT...')
  .description('Remove recipients from the blacklist (the channel must be the one they were added with)')
  .option('--global', "every tenant's list")
  .option('--channel <channel>', CHANNEL_OR_ALL)
  .action((args: string[], options: { global?: boolean; channel?: string }) =>
    withRuntime(async (runtime) => {
      const { scope, recipients } = blacklistTarget(args, options, true);
      const body = await checkBody(BlacklistRemoveBody, { channel: options.channel ?? '*', recipients });
      console.log(
        JSON.stringify(await runtime.http.admin.removeFromBlacklist(scope, body.channel as Channel | '*', body.recipients), null, 2),
      );
    }),
  );
blacklist
  .command('list [tenant]')
  .usage('(TENANT | --global) [--channel C] [--limit N] [--after CURSOR]')
  .description("A page of entries by channel then recipient; pass the answer's `next` as --after for the next page")
  .option('--global', "every tenant's list")
  .option('--channel <channel>', 'only entries of this channel value: sms, email, webhook or *')
  .option('--limit <n>', 'entries per page, 1 to 1000 (default 100)')
  .option('--after <cursor>')
  .action((tenantId: string | undefined, options: { global?: boolean; channel?: string; limit?: string; after?: string }) =>
    withRuntime(async (runtime) => {
      if (options.global && tenantId !== undefined) {
        throw new SluiceError('INVALID_REQUEST', `either TENANT (${tenantId}) or --global, not both`);
      }
      const { scope } = blacklistTarget(tenantId === undefined ? [] : [tenantId], options, false);
      const { global: _, ...query } = options;
      const { channel, limit, after } = await checkBody(BlacklistQuery, query);
      const page = await runtime.http.admin.listBlacklist(scope, {
        ...(channel === undefined ? {} : { channel: channel as Channel | '*' }),
        ...(limit === undefined ? {} : { limit: Number(limit) }),
        ...(after === undefined ? {} : { after }),
      });
      console.log(JSON.stringify(page, null, 2));
    }),
  );

const provider = program.command('provider').description('Register, change, list and remove delivery providers');
provider
  .command('add')
  .description('Register a provider; credentials are read from a JSON file or an environment variable, never from the command line')
  .requiredOption('--scope <scope>', 'tenant id, or * for every tenant')
  .requiredOption('--channel <channel>', 'sms, email or webhook', channelArg)
  .requiredOption('--kind <kind>', 'console, smtp, aliyun-sms, tencent-sms, feishu, slack or http')
  .requiredOption('--name <name>')
  .requiredOption('--qps <n>', "the vendor's QPS contract", integerArg)
  .option('--priority <n>', 'lower is tried first', integerArg)
  // Not --config: that is the settings file, taken anywhere on the command line (npm start -- -c FILE).
  .option(
    '--provider-config <json>',
    'non-secret settings as JSON, e.g. {"host":"smtp.example.com","port":465,"from":"no-reply@example.com"}',
  )
  .option('--secret-file <path>', 'JSON object of credentials')
  .option('--secret-env <variable>', 'environment variable holding the JSON object of credentials')
  .action((options) =>
    withRuntime(async (runtime) => {
      const secret = readSecret(options);
      const body = await checkBody(NewProviderBody, {
        scope: options.scope,
        channel: options.channel,
        kind: options.kind,
        name: options.name,
        qps: options.qps,
        ...(options.priority === undefined ? {} : { priority: options.priority }),
        ...(options.providerConfig ? { config: parseJsonObject(options.providerConfig, '--provider-config') } : {}),
        ...(secret ? { secret } : {}),
      });
      const created = await runtime.http.admin.createProvider(body as Parameters<typeof runtime.http.admin.createProvider>[0]);
      console.log(JSON.stringify(created, null, 2));
    }),
  );
provider
  .command('update <id>')
  .description('Change a provider: only what is given changes; --provider-config replaces the whole config, a new secret the whole secret')
  .option('--name <name>')
  .option('--qps <n>', "the vendor's QPS contract", integerArg)
  .option('--priority <n>', 'lower is tried first', integerArg)
  .option('--provider-config <json>', 'non-secret settings as JSON (replaces the stored config)')
  .option('--secret-file <path>', 'JSON object of credentials (replaces the stored secret)')
  .option('--secret-env <variable>', 'environment variable holding the JSON object of credentials')
  .option('--clear-secret', 'remove the stored credentials')
  .option('--enable', 'send through it again')
  .option('--disable', 'stop sending through it (messages go to the next provider of the channel)')
  .action((id: string, options) =>
    withRuntime(async (runtime) => {
      if (options.enable && options.disable) throw new SluiceError('INVALID_REQUEST', 'give --enable or --disable, not both');
      const secret = readSecret(options);
      if (options.clearSecret && secret) throw new SluiceError('INVALID_REQUEST', 'give a new secret or --clear-secret, not both');
      const patch = {
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.qps === undefined ? {} : { qps: options.qps }),
        ...(options.priority === undefined ? {} : { priority: options.priority }),
        ...(options.providerConfig ? { config: parseJsonObject(options.providerConfig, '--provider-config') } : {}),
        ...(secret ? { secret } : options.clearSecret ? { secret: null } : {}),
        ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {}),
      };
      if (Object.keys(patch).length === 0)
        throw new SluiceError('INVALID_REQUEST', 'nothing to change: give at least one option (--help lists them)');
      const body = await checkBody(ProviderPatchBody, patch);
      const updated = await runtime.http.admin.updateProvider(id, body as Parameters<typeof runtime.http.admin.updateProvider>[1]);
      if (!updated) throw new SluiceError('NOT_FOUND', `no provider ${id}`);
      console.log(JSON.stringify(updated, null, 2));
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
    // Named first: a misspelled variable is often why another setting is missing or wrong.
    for (const name of unknownVariables()) console.error(`warning: ${name} is not a sluice setting (ignored); see docs/configuration.md`);
    for (const line of describeSettings(settingsOf())) console.log(line);
    console.log('settings OK');
  });

/**
 * An error and its causes in one line. An empty message falls back to the inner errors or the
 * code: Node reports a refused connection to a name with two addresses (`localhost`) as an
 * AggregateError without a message.
 */
function explain(error: unknown): string {
  const parts: string[] = [];
  let current = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    if (!(current instanceof Error)) {
      parts.push(String(current));
      break;
    }
    const text =
      current.message ||
      (current instanceof AggregateError ? current.errors.map((inner) => explain(inner)).join('; ') : '') ||
      ((current as NodeJS.ErrnoException).code ?? current.name);
    // A wrapper often repeats its cause's message (MigrationError does): keep each once.
    if (!parts.some((part) => part.includes(text))) parts.push(text);
    current = current.cause;
  }
  return parts.join(': ');
}

/**
 * One line for the operator, exit code 1. The whole error (stack, causes) only at
 * SLUICE_LOG_LEVEL=debug or trace: a wrong argument or an unreachable database is not a crash.
 */
program.parseAsync().catch((error: unknown) => {
  if (error instanceof SluiceError) console.error(`${error.code}: ${error.message}`);
  else if (error instanceof SettingsError) console.error(`configuration: ${error.message}`);
  else if (error instanceof CommanderError) console.error(`error: ${error.message.replace(/^error: /, '')}`);
  else console.error(`error: ${explain(error)}`);
  if (/^(debug|trace)$/.test(process.env.SLUICE_LOG_LEVEL ?? '')) console.error(inspect(error, { depth: 8 }));
  process.exitCode = 1;
});

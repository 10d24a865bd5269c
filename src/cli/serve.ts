/** `sluice serve`: the HTTP API and/or the dispatchers, with a clean shutdown on SIGINT/SIGTERM. */

import type { DemoOptions } from '../main/demo-runtime.js';
import { startService } from '../main/service.js';
import { startTracing } from '../main/tracing-sdk.js';
import { createProvider } from '../providers/registry.js';
import type { Services } from '../services/contracts.js';
import type { Settings } from '../settings/settings.js';

/** The seed's rules (DESIGN.md, seed 000): 1 min 3, 1 h 10, 1 day 50; ban 10 min on breach. */
export const SEED_RULES = [
  { windowSeconds: 60, limit: 3, banSeconds: 600 },
  { windowSeconds: 3600, limit: 10, banSeconds: 600 },
  { windowSeconds: 86_400, limit: 50, banSeconds: 600 },
];

export async function serve(settings: Settings, options: DemoOptions): Promise<void> {
  const fallbackProvider = createProvider({ id: 'console', kind: 'console', channel: 'sms', config: {}, secret: {} });
  // Before anything is built: the first request's spans need the SDK in place.
  const tracing = await startTracing(process.env);
  const service = await startService(settings, { ...options, fallbackProvider }).catch(async (error: unknown) => {
    if (tracing.kind === 'started') await tracing.shutdown().catch(() => undefined);
    throw error;
  });
  const { address, servesApi, logger } = service;
  if (tracing.kind === 'started') logger.info({ exporter: tracing.exporter }, 'tracing: the OpenTelemetry SDK exports spans');
  else if (tracing.kind === 'unavailable') logger.warn(tracing.reason);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await service.stop();
    // After the service: the last sends' spans are flushed.
    if (tracing.kind === 'started')
      await tracing.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'tracing: the last spans were not exported'));
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));

  logger.info(
    { address, roles: settings.roles, ...service.description },
    servesApi ? 'sluice is serving' : 'sluice is dispatching (serving /healthz, /readyz and /metrics only)',
  );
  if (options.demo && servesApi) {
    await printDemo(service.services, service.description.db, address);
    printConsole(settings, address);
  } else if (options.demo)
    logger.warn('--demo prints a curl line for the API, and this process does not serve it (SLUICE_ROLES=worker): ignored');
  else if (servesApi && (await service.services.tenants.listTenants({ limit: 1 })).tenants.length === 0)
    printNextSteps(settings, service.description.db, address);
}

/** On a database without tenants (a first start): what to do next, instead of a bare "serving". */
function printNextSteps(settings: Settings, db: string, address: string): void {
  const admin = settings.adminToken
    ? `The admin API is on (SLUICE_ADMIN_TOKEN): ${address}/docs lists it${settings.console ? `, and the console is at ${address}/console/` : ''}.`
    : `The admin API${settings.console ? ' and the console' : ''} are off until SLUICE_ADMIN_TOKEN is set: restart with\n` +
      `    SLUICE_ADMIN_TOKEN=$(openssl rand -hex 24)   (24 characters or more; keep it, it is the admin password)${
        settings.console ? `\n  and open ${address}/console/ to sign in with it.` : ''
      }`;
  printApart(`sluice is serving ${address} on ${db}, which has no tenant yet. Next:

  1. Create a tenant and its API key (shown once), in another terminal in this folder and with the
     same settings (SLUICE_* variables, or -c FILE):
       npx sluice tenant create NAME
     A new tenant gets the frequency rules of SLUICE_NEW_TENANT_RULES for sms and email:
       npx sluice rules show ID sms
  2. ${admin}
  3. Send with the key: curl -si ${address}/v1/messages -H 'Authorization: Bearer sk_…' \\
       -H 'Content-Type: application/json' -d '{"channel":"sms","to":"+8613800138000","body":"hello"}'
     (no provider is stored yet: the console provider prints each message here).

Or try the demo, which does step 1 for you: stop sluice, then npm start -- --demo (README.md, "After the demo").`);
}

/** Text for the person at the terminal, set apart from the log lines around it by rules. */
function printApart(text: string): void {
  const rule = '─'.repeat(72);
  console.log(`\n${rule}\n${text}\n${rule}\n`);
}

/** Where the admin console is, and what signing in to it needs. */
function printConsole(settings: Settings, address: string): void {
  if (!settings.console) return;
  console.log(
    settings.adminToken
      ? `The admin console: ${address}/console/ (sign in with SLUICE_ADMIN_TOKEN).\n`
      : `The admin console is at ${address}/console/; to sign in, start sluice with SLUICE_ADMIN_TOKEN set (24 characters or more): without it the admin API is off.\n`,
  );
}

/** On a database without tenants: a demo tenant with the seed rules, its key and a curl line. */
async function printDemo(services: Services, db: string, address: string): Promise<void> {
  const { tenants, rules } = services;
  if ((await tenants.listTenants({ limit: 1 })).tenants.length > 0) {
    console.log(
      `\n--demo: ${db} already has tenants; nothing created. For a new key: sluice tenant create NAME, ` +
        'then sluice rules set ID sms 60:3:600 3600:10:600 86400:50:600. To start the demo over, stop sluice and delete that database.\n',
    );
    return;
  }
  const tenant = await tenants.createTenant('demo');
  for (const channel of ['sms', 'email'] as const) await rules.setRules(tenant.id, channel, SEED_RULES);
  await services.templates.putTemplate(tenant.id, 'sms', 'otp', {
    params: { code: { type: 'string', pattern: '^\\d{4,8}$' } },
    body: 'Your code is {{code}}',
  });
  printApart(`Demo tenant "${tenant.name}" (${tenant.id}) created with the seed rules for sms and email:
1 min 3, 1 h 10, 1 day 50; ban 10 min on breach. Its API key is shown once: ${tenant.apiKey}

Send a message with the stored template "otp" (the console provider prints the rendered text here);
the 4th to one number within a minute is 429:

  curl -si ${address}/v1/messages -H 'Authorization: Bearer ${tenant.apiKey}' -H 'Content-Type: application/json' -d '{"channel":"sms","to":"+8613800138000","template":"otp","params":{"code":"1234"}}'

Status callbacks: subscribe a local endpoint to the tenant's message events (signed, docs/api.md):

  node -e "require('http').createServer((q,s)=>{let b='';q.on('data',c=>b+=c).on('end',()=>{console.log(q.headers['sluice-signature'],b);s.end()})}).listen(9000)"
  SLUICE_WEBHOOK_ALLOW_PRIVATE=true node dist/cli/main.js webhook add ${tenant.id} http://127.0.0.1:9000/events`);
}

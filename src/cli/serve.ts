/** `sluice serve`: the HTTP API and/or the dispatchers, with a clean shutdown on SIGINT/SIGTERM. */

import { redisEvictionWarning } from '../infra/redis-client.js';
import { type HttpRole, startHttp } from '../main/api.js';
import type { createRuntime } from '../main/runtime.js';
import { shutdown } from '../main/shutdown.js';
import { startWorker } from '../main/worker.js';
import { createProvider } from '../providers/registry.js';
import { type Settings, unknownVariables } from '../settings/settings.js';
import { type DemoOptions, serveRuntime } from './demo.js';

/** The seed's rules (DESIGN.md, seed 000): 1 min 3, 1 h 10, 1 day 50; ban 10 min on breach. */
export const SEED_RULES = [
  { windowSeconds: 60, limit: 3, banSeconds: 600 },
  { windowSeconds: 3600, limit: 10, banSeconds: 600 },
  { windowSeconds: 86_400, limit: 50, banSeconds: 600 },
];

/** Below this, `serve` warns that the admin token could be guessed. */
const MIN_ADMIN_TOKEN_LENGTH = 24;

export async function serve(settings: Settings, options: DemoOptions): Promise<void> {
  const runtime = await serveRuntime(settings, options);
  const { logger } = runtime;
  await warmUp(runtime);
  for (const name of unknownVariables()) logger.warn({ variable: name }, 'not a sluice setting: ignored (docs/configuration.md)');
  // The admin token is a password: the failure limit slows a guesser per address, not one with many.
  if (settings.adminToken && settings.adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    logger.warn(
      { length: settings.adminToken.length },
      `SLUICE_ADMIN_TOKEN is short: use at least ${MIN_ADMIN_TOKEN_LENGTH} random characters (openssl rand -base64 32)`,
    );
  }
  // A shared database invites a second instance, and without Redis each would count alone: a rule
  // of 3 a minute would let 3 through each instance. Nothing else would tell.
  if (!runtime.redis && runtime.database.dialect !== 'sqlite') {
    logger.warn(
      { db: runtime.database.displayUrl },
      'no Redis: frequency rules, quotas and provider pacing are counted in this process only; run one instance, or set SLUICE_REDIS_URL so that several share their counts',
    );
  }
  // Redis evicting limiter keys when full would lift bans and reset counts without a word.
  if (runtime.redis) {
    const warning = await redisEvictionWarning(runtime.redis, EVICTION_CHECK_MS);
    if (warning) logger.warn({ redis: 'maxmemory-policy' }, warning);
  }
  runtime.metrics.setMessageCounts(() => runtime.repositories.messages.countOpen());

  // Listen before starting the dispatchers: a port in use must end the process, not leave a
  // worker running behind a server that never came up. A worker-only instance serves its probes
  // and metrics (the delivery metrics exist only on workers).
  const servesApi = settings.roles.includes('api');
  let http: HttpRole;
  try {
    http = await startHttp(runtime, { servesApi });
  } catch (error) {
    await runtime.close();
    throw error;
  }
  const { address, feed } = http;
  let delivery: ReturnType<typeof startWorker> | undefined;
  if (settings.roles.includes('worker')) {
    const consoleProvider = createProvider({ id: 'console', kind: 'console', channel: 'sms', config: {}, secret: {} });
    delivery = startWorker(runtime, consoleProvider, feed ? { feed } : {});
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await shutdown(runtime, { http, delivery });
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));

  logger.info(
    { address, roles: settings.roles, db: runtime.database.displayUrl, redis: runtime.redis ? 'on' : 'embedded' },
    servesApi ? 'sluice is serving' : 'sluice is dispatching (serving /healthz, /readyz and /metrics only)',
  );
  if (options.demo && servesApi) {
    await printDemo(runtime, address);
    printConsole(settings, address);
  } else if (options.demo)
    logger.warn('--demo prints a curl line for the API, and this process does not serve it (SLUICE_ROLES=worker): ignored');
}

/** The longest a start waits for each Redis server's `CONFIG GET maxmemory-policy`. */
const EVICTION_CHECK_MS = 1000;

/** The longest a start waits for its warm-up look at Redis. */
const WARM_UP_MS = 1000;

/**
 * The first limiter decision pays for the Redis connection and the script's load (NOSCRIPT, then
 * EVAL). Paid by a burst of requests, that opened the breaker on every start; paid here, by a
 * look that records nothing, it delays the start by a round trip. Bounded: a Redis Cluster that
 * is not up queues commands with no timeout of their own.
 */
export async function warmUp(runtime: Awaited<ReturnType<typeof createRuntime>>): Promise<void> {
  if (!runtime.redis) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    runtime.limiter.peek({ subject: 'sluice:warm-up', rules: [{ windowMs: 1000, limit: 1 }] }).catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, WARM_UP_MS);
    }),
  ]);
  clearTimeout(timer);
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
async function printDemo(runtime: Awaited<ReturnType<typeof createRuntime>>, address: string): Promise<void> {
  const { tenants, rules } = runtime.services;
  if ((await tenants.listTenants({ limit: 1 })).tenants.length > 0) {
    console.log(
      `\n--demo: ${runtime.database.displayUrl} already has tenants; nothing created. For a new key: sluice tenant create NAME, ` +
        'then sluice rules set ID sms 60:3:600 3600:10:600 86400:50:600. To start the demo over, stop sluice and delete that database.\n',
    );
    return;
  }
  const tenant = await tenants.createTenant('demo');
  for (const channel of ['sms', 'email'] as const) await rules.setRules(tenant.id, channel, SEED_RULES);
  await runtime.services.templates.putTemplate(tenant.id, 'sms', 'otp', {
    params: { code: { type: 'string', pattern: '^\\d{4,8}$' } },
    body: 'Your code is {{code}}',
  });
  console.log(`
Demo tenant "${tenant.name}" (${tenant.id}) created with the seed rules for sms and email:
1 min 3, 1 h 10, 1 day 50; ban 10 min on breach. Its API key is shown once: ${tenant.apiKey}

Send a message with the stored template "otp" (the console provider prints the rendered text here);
the 4th to one number within a minute is 429:

  curl -si ${address}/v1/messages -H 'Authorization: Bearer ${tenant.apiKey}' -H 'Content-Type: application/json' -d '{"channel":"sms","to":"+8613800138000","template":"otp","params":{"code":"1234"}}'

Status callbacks: subscribe a local endpoint to the tenant's message events (signed, docs/api.md):

  node -e "require('http').createServer((q,s)=>{let b='';q.on('data',c=>b+=c).on('end',()=>{console.log(q.headers['sluice-signature'],b);s.end()})}).listen(9000)"
  SLUICE_WEBHOOK_ALLOW_PRIVATE=true node dist/cli/main.js webhook add ${tenant.id} http://127.0.0.1:9000/events
`);
}

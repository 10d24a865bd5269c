/**
 * The one settings schema: every variable, its kind, default, allowed values and what it does.
 * docs/configuration.md lists the same settings; test/settings/settings.test.ts keeps them in sync.
 * Loading them (environment, a JSON file) is settings.ts.
 */
import { isIP } from 'node:net';
import { isSupportedCountry } from 'libphonenumber-js/max';
import { dialectOfUrl, sqlitePathOfUrl } from '../core/urls.js';
import { BROKER_SETTINGS } from './broker-settings.js';
import { DNS_SETTINGS } from './dns-settings.js';
import { LIMITER_SNAPSHOT_SETTINGS } from './limiter-snapshot-settings.js';
import { type SettingSpec, spec } from './spec.js';
import { TENANT_SETTINGS } from './tenant-settings.js';
import { WEBHOOK_SETTINGS } from './webhook-settings.js';

export const SETTINGS = {
  dbUrl: spec({
    env: 'SLUICE_DB_URL',
    kind: 'string',
    default: 'sqlite:./data/sluice.db',
    secret: true,
    description: 'Database: `sqlite:PATH` (embedded default), `postgres://…` or `mysql://…`.',
    check: checkDatabaseUrl,
  }),
  sqliteSynchronous: spec({
    env: 'SLUICE_SQLITE_SYNCHRONOUS',
    kind: 'string',
    default: 'full',
    oneOf: ['full', 'normal'],
    description:
      'SQLite durability: `full` fsyncs every commit (survives power loss); `normal` survives a process crash but may lose the last commits on an OS crash or power cut, and is faster (docs/storage.md).',
  }),
  redisUrl: spec({
    env: 'SLUICE_REDIS_URL',
    kind: 'string',
    default: '',
    secret: true,
    description: 'Redis URL (`redis://…`). Empty: the embedded default (limiter, locks and due index in process).',
    check: (url: string) =>
      url === '' || /^rediss?:\/\//i.test(url) ? undefined : 'SLUICE_REDIS_URL must start with redis:// or rediss://',
  }),
  redisClusterNodes: spec({
    env: 'SLUICE_REDIS_CLUSTER_NODES',
    kind: 'list',
    default: [],
    description: 'Comma-separated `host:port` seeds of a Redis Cluster; when set, used instead of SLUICE_REDIS_URL.',
    check: (nodes: string[]) => {
      // A seed without its port would silently mean 6379.
      const bad = nodes.filter(
        (node) => !/^[^\s:]+:\d{1,5}$/.test(node) || Number(node.split(':')[1]) > 65_535 || Number(node.split(':')[1]) < 1,
      );
      return bad.length
        ? `SLUICE_REDIS_CLUSTER_NODES: each seed is host:port, not ${bad.map((node) => JSON.stringify(node)).join(', ')}`
        : undefined;
    },
  }),
  redisKeyPrefix: spec({
    env: 'SLUICE_REDIS_KEY_PREFIX',
    kind: 'string',
    default: 'sluice:',
    description: 'Prefix of every Redis key and pub/sub channel sluice uses, so several deployments can share one Redis.',
  }),
  host: spec({
    env: 'SLUICE_HOST',
    kind: 'string',
    default: '127.0.0.1',
    description: 'Address the HTTP server binds to (`0.0.0.0` to expose it).',
  }),
  port: spec({ env: 'SLUICE_PORT', kind: 'int', default: 3000, range: [0, 65535], description: 'HTTP port (0: any free port).' }),
  roles: spec({
    env: 'SLUICE_ROLES',
    kind: 'list',
    default: ['api', 'worker'],
    description:
      '`serve` roles: `api` (the HTTP API), `worker` (dispatchers), or both. A worker-only instance still serves `/healthz`, `/readyz` and `/metrics` on `SLUICE_PORT`.',
    check: (roles) =>
      roles.length > 0 && roles.every((role) => role === 'api' || role === 'worker')
        ? undefined
        : 'SLUICE_ROLES must list api and/or worker',
  }),
  adminToken: spec({
    env: 'SLUICE_ADMIN_TOKEN',
    kind: 'string',
    default: '',
    secret: true,
    description:
      'Bearer token of the admin API. Empty: the admin API is off (the CLI still works on the database). `serve` warns when it is shorter than 24 characters: the failure limit (SLUICE_AUTH_FAILURE_LIMIT) slows guesses per address, not a guesser with many addresses.',
  }),
  console: spec({
    env: 'SLUICE_CONSOLE',
    kind: 'bool',
    default: true,
    description:
      'Serve the admin console at `/console` (built into `dist/console/` by `npm run build`; it signs in with SLUICE_ADMIN_TOKEN). Off: `/console` answers 404.',
  }),
  secretKey: spec({
    env: 'SLUICE_SECRET_KEY',
    kind: 'string',
    default: '',
    secret: true,
    description:
      'Base64 32-byte key encrypting provider credentials and keying the recipient hashes in Redis keys. Empty: read or create `SLUICE_SECRET_KEY_FILE`.',
    check: (key) => (key === '' || decodeSecretKey(key) ? undefined : SECRET_KEY_FORMAT),
  }),
  secretKeyFile: spec({
    env: 'SLUICE_SECRET_KEY_FILE',
    kind: 'string',
    default: './data/secret.key',
    description: 'Where the secret key is kept when SLUICE_SECRET_KEY is empty (created with mode 0600 on first start).',
  }),
  httpRequestTimeoutMs: spec({
    env: 'SLUICE_HTTP_REQUEST_TIMEOUT_MS',
    kind: 'int',
    default: 30_000,
    range: [100, 600_000],
    description:
      'Longest a client may take to send one whole request (headers and body); a slower one is answered 400 INVALID_REQUEST ("did not arrive in full in time") and its connection closed, so trickling clients cannot hold connections open.',
  }),
  httpMaxConnections: spec({
    env: 'SLUICE_HTTP_MAX_CONNECTIONS',
    kind: 'int',
    default: 10_000,
    range: [1, 1_000_000],
    description:
      "Most client connections the HTTP server holds open at once (Node's server.maxConnections); one over it is closed as it arrives, so kept-alive connections cannot use up the process's file descriptors. 10,000 leaves most of even a 20,000-descriptor limit to the database, Redis and providers.",
  }),
  httpMaxConnectionsPerIp: spec({
    env: 'SLUICE_HTTP_MAX_CONNECTIONS_PER_IP',
    kind: 'int',
    default: 0,
    range: [0, 1_000_000],
    description:
      'Most connections one client address holds open at once; one over it is closed as it arrives. 0: no per-address cap (behind a load balancer or proxy every connection comes from its address).',
  }),
  shutdownTimeoutMs: spec({
    env: 'SLUICE_SHUTDOWN_TIMEOUT_MS',
    kind: 'int',
    default: 10_000,
    range: [0, 600_000],
    description:
      "On SIGTERM or SIGINT, the longest `serve` waits for the requests still in progress (their clients may have hung up: a handler runs on) and for their connections to end (answers during the stop carry `Connection: close`) before it stops the dispatchers and closes Redis and the database; a connection still open then is closed under its client. Keep the sum of this and the longest provider timeout under the orchestrator's grace period.",
  }),
  trustProxy: spec({
    env: 'SLUICE_TRUST_PROXY',
    kind: 'string',
    default: '',
    description:
      "Which proxies' `X-Forwarded-For` gives the client address (Fastify's trustProxy), for the authentication failure limit: comma-separated addresses or CIDRs of the proxies (`10.0.0.0/8,127.0.0.1`; also `loopback`, `linklocal`, `uniquelocal`), or `true` (any: only when nothing but the proxy can reach sluice). Empty: the connection's address (behind a proxy, every client's is the proxy's).",
    check: checkTrustProxy,
  }),
  authFailureLimit: spec({
    env: 'SLUICE_AUTH_FAILURE_LIMIT',
    kind: 'int',
    default: 30,
    range: [0, 1_000_000],
    description:
      'Wrong API keys or admin tokens one client address may present within SLUICE_AUTH_FAILURE_WINDOW_MS; past it, its requests are answered 429 AUTH_THROTTLED, their credentials unchecked, until the window has room again. Counted in Redis when configured (shared by the instances), else in process (up to 100,000 addresses; an IPv6 client counts by its /64). 0: no limit.',
  }),
  authFailureWindowMs: spec({
    env: 'SLUICE_AUTH_FAILURE_WINDOW_MS',
    kind: 'int',
    default: 60_000,
    range: [1000, 86_400_000],
    description: 'The sliding window of SLUICE_AUTH_FAILURE_LIMIT.',
  }),
  limiterMemoryMax: spec({
    env: 'SLUICE_LIMITER_MEMORY_MAX',
    kind: 'int',
    default: 1_000_000,
    range: [1000, 100_000_000],
    description:
      "Most subjects (recipients, quota buckets, risk subjects) the in-process limiter holds, about 1 KB each (risk rules' own state is bounded in bytes by SLUICE_RISK_MEMORY_MAX_BYTES): the embedded default, and the fallback while Redis is away. A subject is kept for its longest window, so distinct recipients at a steady rate would fill the heap; at the limit an expired subject makes room, else the least recently checked subject of a tenant holding at least its fair share (this limit ÷ tenants holding state): the tenant creating subjects, or the one holding most; it forgets its counts (sluice_limiter_memory_evictions_total). Quota buckets are never dropped, bans last; when nothing may go the request answers 503 UNAVAILABLE.",
  }),
  riskStateMaxBytes: spec({
    env: 'SLUICE_RISK_STATE_MAX_BYTES',
    kind: 'int',
    default: 2_097_152,
    range: [65_536, 1_073_741_824],
    description:
      "Most bytes a risk rule set may keep for the values of one event: the sum over its rules of each rule's state for one subject at its largest, computed from the rule's parameters (a window's limit, last-n's n, a distinct limit, a seen filter's capacity and false-positive rate; docs/risk.md has the table). A PUT of a set above it is refused with 400 naming the rule and its bytes; sets stored before stay in force. The default holds an exact distinct rule of 10,000 values (1.4 MB) beside ordinary rules, and refuses a seen filter of 1,000,000 values at 1e-9 (11 MB a subject).",
  }),
  riskMemoryMaxBytes: spec({
    env: 'SLUICE_RISK_MEMORY_MAX_BYTES',
    kind: 'int',
    default: 268_435_456,
    range: [1_048_576, 68_719_476_736],
    description:
      "Most bytes of risk state (last-n, distinct, seen and one-call window rules) kept in process: the embedded default, and the fallback while Redis is away. Counted per subject by the bounds of docs/risk.md; beyond it the oldest subjects are dropped and forget their state. SLUICE_LIMITER_MEMORY_MAX bounds the same store's subjects.",
  }),
  redisSlotGroups: spec({
    env: 'SLUICE_REDIS_SLOT_GROUPS',
    kind: 'int',
    default: 0,
    range: [0, 16_384],
    description:
      'Redis Cluster only: put recipients into this many hash-tag groups so one limiter script call carries the decisions of many (a multiple of the masters, e.g. 12 or 16 per master; at most this many shards can share the load). 0: one slot per recipient, a call per decision on a cluster (about 3 times the Redis CPU). Changes every limiter key: set it when a deployment starts; changing it later starts every count afresh.',
  }),
  banCacheMs: spec({
    env: 'SLUICE_BAN_CACHE_MS',
    kind: 'int',
    default: 10_000,
    range: [0, 600_000],
    description:
      'Longest an instance answers a recipient banned in Redis from its own memory (until the ban ends, at most this long after it learnt it), without a Redis call. An unban, reset or rule change drops it on every instance at once through Redis pub/sub; while pub/sub is down a lifted ban may still be answered for up to this long. 0 turns the cache off.',
  }),
  limiterLeaseMs: spec({
    env: 'SLUICE_LIMITER_LEASE_MS',
    kind: 'int',
    default: 100,
    range: [0, 10_000],
    description:
      'Token leasing for tenant requests-per-second quotas: an instance leases blocks of tokens from Redis, sized to its own rate over this long, and spends them in process; unused tokens go back after this long and on shutdown. In any second a tenant may get up to qps × this / 1000 more than an exact count would admit, and an instance that dies loses its unused block. 0: every quota check asks Redis.',
  }),
  retentionDays: spec({
    env: 'SLUICE_RETENTION_DAYS',
    kind: 'int',
    default: 30,
    range: [0, 3650],
    description:
      'Days a finished message (sent, failed, canceled) and its attempts are kept, and likewise finished webhook events and receipts that matched no sent message; workers delete older ones every hour. An Idempotency-Key is remembered as long as its message. 0: keep them for ever.',
  }),
  bodyLimitBytes: spec({
    env: 'SLUICE_BODY_LIMIT_BYTES',
    kind: 'int',
    default: 1_048_576,
    range: [1024, 10_485_760],
    description:
      'Largest request body accepted; larger ones get 413 PAYLOAD_TOO_LARGE. The default holds the largest message the schema allows (an email of 64 Ki characters of HTML and 32 Ki of text) in any JSON encoding.',
  }),
  batchRenderLimitBytes: spec({
    env: 'SLUICE_BATCH_RENDER_LIMIT_BYTES',
    kind: 'int',
    default: 16_777_216,
    range: [65_536, 1_073_741_824],
    description:
      "Most bytes (UTF-8) the rendered texts of one batch's messages may take together: a message whose template renders past it gets 413 PAYLOAD_TOO_LARGE in its result, the others are admitted. Each rendered text is also held to its inline limit (body 32,768 characters, html 65,536, subject 998).",
  }),
  scheduleHorizonDays: spec({
    env: 'SLUICE_SCHEDULE_HORIZON_DAYS',
    kind: 'int',
    default: 30,
    range: [1, 365],
    description: 'How far ahead `sendAt` may be.',
  }),
  defaultRegion: spec({
    env: 'SLUICE_DEFAULT_REGION',
    kind: 'string',
    default: 'CN',
    description: 'Country assumed for phone numbers given without `+country` (ISO 3166 alpha-2).',
    check: (region) =>
      isSupportedCountry(region) ? undefined : `SLUICE_DEFAULT_REGION must be a country code such as CN or US (got "${region}")`,
  }),
  configCacheMs: spec({
    env: 'SLUICE_CONFIG_CACHE_MS',
    kind: 'int',
    default: 5000,
    range: [0, 600_000],
    description:
      'How long an instance keeps tenant config in process before asking Redis/SQL again. Changes invalidate it at once through Redis pub/sub (or in process). Also how often the in-process blacklist is checked against SQL for changes made past sluice; 0 asks SQL for the blacklist on every message.',
  }),
  blacklistMemoryMax: spec({
    env: 'SLUICE_BLACKLIST_MEMORY_MAX',
    kind: 'int',
    default: 100_000,
    range: [0, 10_000_000],
    description:
      'Largest blacklist (tenant and global entries together) held in process, about 80 bytes per entry; admission then answers from memory. A larger table, or 0, is asked in SQL on every message.',
  }),
  logLevel: spec({
    env: 'SLUICE_LOG_LEVEL',
    kind: 'string',
    default: 'info',
    oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    description:
      'Log level (pino). `debug` and `trace` add a line per HTTP request and per response; at `info` requests are measured by `sluice_http_request_duration_seconds` and only failures (5xx) are logged per request.',
  }),
  logFormat: spec({
    env: 'SLUICE_LOG_FORMAT',
    kind: 'string',
    default: 'auto',
    oneOf: ['auto', 'json', 'pretty'],
    description:
      'How log lines are written: `json` (one pino JSON object a line, for collectors), `pretty` (coloured and readable, for a person), or `auto`: pretty when standard output is a terminal, JSON otherwise. Fastify lines (`Server listening`) take the same format; the texts `serve` prints for the person at the terminal (the demo, the next steps on a new database) are set apart from the log by rules, and a stop ends with `sluice stopped`.',
  }),
  partitions: spec({
    env: 'SLUICE_PARTITIONS',
    kind: 'int',
    default: 1,
    range: [1, 1024],
    description:
      'Dispatcher partitions per channel; each is worked by one lock holder at a time, and with Redis the workers share them (each holds at most its fair share). Give every instance of a deployment (API and worker) the same value: an API instance indexes what it accepts by partition.',
  }),
  leaseMs: spec({
    env: 'SLUICE_LEASE_MS',
    kind: 'int',
    default: 5000,
    range: [500, 600_000],
    description:
      'Dispatcher lock lease; renewed every lease/3. Also the lease of a message being sent, renewed the same way while its send (pace wait included) lasts, and (Redis) how long the entry of a worker in the roster of workers sharing the partitions lasts, renewed every lease/3.',
  }),
  pollMs: spec({
    env: 'SLUICE_POLL_MS',
    kind: 'int',
    default: 1000,
    range: [10, 60_000],
    description:
      'How often a dispatcher looks for due messages at the latest. It ticks sooner when the next message it knows of is due, and at once for a new immediate one.',
  }),
  sendConcurrency: spec({
    env: 'SLUICE_SEND_CONCURRENCY',
    kind: 'int',
    default: 32,
    range: [1, 10_000],
    description: 'Sends in flight per dispatcher.',
  }),
  maxAttempts: spec({
    env: 'SLUICE_MAX_ATTEMPTS',
    kind: 'int',
    default: 5,
    range: [1, 100],
    description: 'Delivery attempts before a message is `failed`.',
  }),
  retryBaseMs: spec({
    env: 'SLUICE_RETRY_BASE_MS',
    kind: 'int',
    default: 1000,
    range: [1, 3_600_000],
    description: 'First retry delay; doubles each attempt, with full jitter.',
  }),
  retryMaxMs: spec({
    env: 'SLUICE_RETRY_MAX_MS',
    kind: 'int',
    default: 300_000,
    range: [1, 86_400_000],
    description: 'Largest retry delay.',
  }),
  ...WEBHOOK_SETTINGS,
  ...BROKER_SETTINGS,
  ...DNS_SETTINGS,
  ...TENANT_SETTINGS,
  ...LIMITER_SNAPSHOT_SETTINGS,
  degradeAlertMs: spec({
    env: 'SLUICE_DEGRADE_ALERT_MS',
    kind: 'int',
    default: 10,
    range: [1, 10_000],
    description: 'Redis call latency above which a warning is logged and counted.',
  }),
  degradeMs: spec({
    env: 'SLUICE_DEGRADE_MS',
    kind: 'int',
    default: 50,
    range: [1, 10_000],
    description: 'Sustained Redis latency above which the breaker opens and decisions use the fallback.',
  }),
  redisTimeoutMs: spec({
    env: 'SLUICE_REDIS_TIMEOUT_MS',
    kind: 'int',
    default: 100,
    range: [1, 60_000],
    description: 'Timeout of one limiter call to Redis; a timeout counts as a failure.',
  }),
  redisCommandTimeoutMs: spec({
    env: 'SLUICE_REDIS_COMMAND_TIMEOUT_MS',
    kind: 'int',
    default: 2000,
    range: [50, 60_000],
    description:
      'Longest wait for any other Redis command (locks, due index, config cache, admin calls, shutdown): a frozen Redis fails them after this instead of hanging them.',
  }),
  breakerOpenMs: spec({
    env: 'SLUICE_BREAKER_OPEN_MS',
    kind: 'int',
    default: 2000,
    range: [10, 600_000],
    description: 'How long the breaker stays open before half-open probes.',
  }),
  fallbackMode: spec({
    env: 'SLUICE_FALLBACK_MODE',
    kind: 'string',
    default: 'local',
    // Not `static`: static rules are a tenant channel's own (its rule set's fallback), and the
    // service has none to default to; the limiter refused it at every start with Redis.
    oneOf: ['local', 'allow', 'deny'],
    description:
      'Default fallback while degraded: local, allow or deny (a tenant channel may override it, and choose static with rules of its own).',
  }),
  fallbackDivideBy: spec({
    env: 'SLUICE_FALLBACK_DIVIDE_BY',
    kind: 'int',
    default: 1,
    range: [1, 1000],
    description: '`local` fallback: divide limits by this (the number of instances) so the fleet stays near the global limit.',
  }),
  sampleRate: spec({
    env: 'SLUICE_SAMPLE_RATE',
    kind: 'number',
    default: 1,
    range: [0, 1],
    // The limiter refuses 0 (it would check nothing), which `serve` only found at start.
    check: (rate: number) => (rate > 0 ? undefined : 'SLUICE_SAMPLE_RATE must be above 0 (and at most 1)'),
    description:
      'While degraded, the fraction of requests checked in full against the fallback (above 0, at most 1); the rest are allowed.',
  }),
} as const;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<S> = S extends SettingSpec<infer K> ? SettingSpec<K>['default'] : never;
export type Settings = { readonly [N in SettingName]: ValueOf<(typeof SETTINGS)[N]> };

/** Every setting's variable name. */

function checkDatabaseUrl(url: string): string | undefined {
  const dialect = dialectOfUrl(url);
  if (!dialect) return 'SLUICE_DB_URL must start with sqlite:, postgres://, postgresql://, mysql:// or mariadb://';
  if (dialect === 'sqlite') {
    try {
      sqlitePathOfUrl(url);
    } catch {
      return 'SLUICE_DB_URL: sqlite: needs a file path (sqlite:./data/sluice.db) or :memory:';
    }
  }
  return undefined;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** Whether `item` is an address, a CIDR (address/prefix) or one of proxy-addr's names. */
function isProxyItem(item: string): boolean {
  if (PROXY_NAMES.includes(item)) return true;
  const [address = '', prefix, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

function checkTrustProxy(text: string): string | undefined {
  if (['', 'true', 'false'].includes(text)) return undefined;
  const bad = text.split(',').filter((item) => !isProxyItem(item.trim()));
  return bad.length === 0
    ? undefined
    : `SLUICE_TRUST_PROXY: not an address, a CIDR, loopback, linklocal or uniquelocal: ${bad.map((item) => JSON.stringify(item)).join(', ')}`;
}

/** SLUICE_TRUST_PROXY as Fastify's `trustProxy` takes it: off, any, or the proxies' addresses. */
export function trustProxyOption(text: string): boolean | string {
  if (text === '' || text === 'false') return false;
  if (text === 'true') return true;
  return text
    .split(',')
    .map((item) => item.trim())
    .join(',');
}

/** The 32 bytes of a base64 secret key, or undefined if it is not one. */
export function decodeSecretKey(text: string): Buffer | undefined {
  const key = Buffer.from(text.trim(), 'base64');
  return key.length === 32 ? key : undefined;
}

export const SECRET_KEY_FORMAT = 'SLUICE_SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)';

/** A setting that cannot be parsed; names the variable and what it expects. */

/** The settings of tenant webhooks (status callbacks): part of {@link SETTINGS}, kept apart to keep each file short. */
import { spec } from './spec.js';

export const WEBHOOK_SETTINGS = {
  webhookAllowPrivate: spec({
    env: 'SLUICE_WEBHOOK_ALLOW_PRIVATE',
    kind: 'bool',
    default: false,
    description:
      'Let tenant webhooks post to loopback, private and link-local addresses (tests, the demo, a closed network). Off: such URLs are refused when stored and before every post. `serve --demo` turns it on when it creates its tenant on a new database and this is not set (and logs it); a value set is kept.',
  }),
  webhookAllowedHosts: spec({
    env: 'SLUICE_WEBHOOK_ALLOWED_HOSTS',
    kind: 'list',
    default: [],
    description: 'Comma-separated hosts (`hooks.example.com`, `*.example.com`) tenant webhooks may post to. Empty: any public host.',
  }),
  webhookPollMs: spec({
    env: 'SLUICE_WEBHOOK_POLL_MS',
    kind: 'int',
    default: 250,
    range: [10, 60_000],
    description: 'How often an event dispatcher looks for pending webhook events at the latest; it looks again at once when a post ends.',
  }),
  webhookConcurrency: spec({
    env: 'SLUICE_WEBHOOK_CONCURRENCY',
    kind: 'int',
    default: 8,
    range: [1, 256],
    description: 'Posts in flight per webhook endpoint: the pace of one endpoint, whose slowness holds up no other.',
  }),
  webhookTimeoutMs: spec({
    env: 'SLUICE_WEBHOOK_TIMEOUT_MS',
    kind: 'int',
    default: 10_000,
    range: [100, 60_000],
    description: 'How long an endpoint has to answer a post; no 2xx within it is a failure, retried.',
  }),
  webhookRetryBaseMs: spec({
    env: 'SLUICE_WEBHOOK_RETRY_BASE_MS',
    kind: 'int',
    default: 5000,
    range: [1, 3_600_000],
    description:
      'First retry delay of a webhook event; doubles each attempt, with full jitter. Events are retried for 24 h, then `failed`.',
  }),
  webhookRetryMaxMs: spec({
    env: 'SLUICE_WEBHOOK_RETRY_MAX_MS',
    kind: 'int',
    default: 3_600_000,
    range: [1, 86_400_000],
    description: 'Largest retry delay of a webhook event.',
  }),
  webhookRotateGraceHours: spec({
    env: 'SLUICE_WEBHOOK_ROTATE_GRACE_HOURS',
    kind: 'int',
    default: 24,
    range: [0, 720],
    description: 'After a webhook secret is rotated, how long events are signed with the old secret too (a second `v1=`).',
  }),
};

/**
 * The settings of the broker hand-off (docs/operations.md, "Brokers"): part of `SETTINGS`, kept
 * apart to keep each file short. No SLUICE_BROKER_URL: no broker, and none of the others is read.
 */
import { spec } from './spec.js';

export const BROKER_SETTINGS = {
  brokerUrl: spec({
    env: 'SLUICE_BROKER_URL',
    kind: 'list',
    default: [],
    description:
      "NATS servers with JetStream for the hand-off of due messages and the status events bus: `nats://host:port`, or a comma-separated list of a cluster's servers (`tls://host:port` for TLS, then for every server). Credentials never go here: SLUICE_BROKER_CREDENTIALS_FILE. Empty: no broker.",
    check: brokerUrlProblem,
  }),
  brokerCredentialsFile: spec({
    env: 'SLUICE_BROKER_CREDENTIALS_FILE',
    kind: 'string',
    default: '',
    description:
      'File with the broker credentials, read at every (re)connect so it can be rotated in place: a NATS `.creds` file (user JWT and seed), or JSON `{"user": "…", "password": "…"}` or `{"token": "…"}`. Never logged. Empty: connect without credentials.',
  }),
  brokerPrefix: spec({
    env: 'SLUICE_BROKER_PREFIX',
    kind: 'string',
    default: 'sluice',
    description:
      'First token of every subject (`<prefix>.deliver.…`, `<prefix>.events.…`) and, upper-cased, of the stream names (`SLUICE_DELIVER`, `SLUICE_EVENTS`), so several deployments can share one NATS account. Letters, digits, `_` and `-`.',
    check: (prefix: string) =>
      /^[A-Za-z0-9_-]{1,32}$/.test(prefix) ? undefined : 'SLUICE_BROKER_PREFIX must be 1 to 32 of A-Z a-z 0-9 _ -',
  }),
  brokerReplicas: spec({
    env: 'SLUICE_BROKER_REPLICAS',
    kind: 'int',
    default: 1,
    range: [1, 5],
    description: 'Replicas of each stream sluice creates: 3 on a 3-node JetStream cluster, so a node can fail without losing the streams.',
  }),
  brokerAckWaitMs: spec({
    env: 'SLUICE_BROKER_ACK_WAIT_MS',
    kind: 'int',
    default: 30_000,
    range: [1000, 3_600_000],
    description:
      'How long a delivered message may go without an ack or a progress report before the broker gives it to another worker: the hand-over time after a worker dies. Later redeliveries of the same message wait 2, 4, 8 and 16 times this.',
  }),
  brokerMaxDeliver: spec({
    env: 'SLUICE_BROKER_MAX_DELIVER',
    kind: 'int',
    default: 20,
    range: [2, 1000],
    description:
      'Deliveries of one published message (retries waiting in the broker and redeliveries after a worker died count alike); the last one is marked final, and its worker ends the message.',
  }),
  brokerMaxAckPending: spec({
    env: 'SLUICE_BROKER_MAX_ACK_PENDING',
    kind: 'int',
    default: 10_000,
    range: [1, 1_000_000],
    description:
      'Messages of one channel delivered and not yet acked, across all workers (being sent, or waiting for a retry delay in the broker); at the limit the broker delivers no more until some are acked.',
  }),
  brokerMaxNakDelayMs: spec({
    env: 'SLUICE_BROKER_MAX_NAK_DELAY_MS',
    kind: 'int',
    default: 60_000,
    range: [0, 3_600_000],
    description:
      'Longest retry delay a message waits in the broker (each waiting message holds a place of SLUICE_BROKER_MAX_ACK_PENDING); a longer one goes back through the due index.',
  }),
  brokerRepublishAfterMs: spec({
    env: 'SLUICE_BROKER_REPUBLISH_AFTER_MS',
    kind: 'int',
    default: 3_600_000,
    range: [1000, 86_400_000],
    description:
      'A due message handed to the broker and still unfinished after this long is published again (the sweep, at each due index rebuild): it covers a job the broker lost without its stream being recreated. A message waiting in a backlog longer than this is published twice; the second job finds it sent and is dropped.',
  }),
  brokerHandOffWindow: spec({
    env: 'SLUICE_BROKER_HANDOFF_WINDOW',
    kind: 'int',
    default: 0,
    range: [0, 100_000],
    description:
      "Jobs of one partition in the broker at once (handed off, not finished), shared among the tenants as the send slots are (up to twice this with tenants below their shares); the rest wait in the due index, in the fair order. 0: SLUICE_SEND_CONCURRENCY, which one worker's consumer pulls at once (it pulls up to twice SLUICE_SEND_CONCURRENCY), so the stream queues no tenant's jobs behind another's. Raise it with several workers pulling one partition; above what the consumers pull, jobs wait in the stream in hand-off order.",
  }),
  brokerEvents: spec({
    env: 'SLUICE_BROKER_EVENTS',
    kind: 'bool',
    default: true,
    description:
      'With the broker on, every status change is also published to the status events stream (`<prefix>.events.<tenantId>.<type>`) through its SQL outbox. Off when nothing consumes that stream: the outbox row written, read and deleted per change is then saved (webhooks are not affected).',
  }),
  brokerEventsMaxAgeHours: spec({
    env: 'SLUICE_BROKER_EVENTS_MAX_AGE_HOURS',
    kind: 'int',
    default: 168,
    range: [1, 8760],
    description: 'How long the status events stream keeps an event for its consumers.',
  }),
  brokerEventsMaxMb: spec({
    env: 'SLUICE_BROKER_EVENTS_MAX_MB',
    kind: 'int',
    default: 1024,
    range: [1, 1_048_576],
    description: 'Largest the status events stream grows (MiB); beyond it the oldest events are dropped.',
  }),
};

/**
 * What is wrong with a list of broker server URLs, or undefined: each `nats://host[:port]` or
 * `tls://host[:port]` (the same scheme for all), no credentials (named, never quoted), no path.
 */
export function brokerUrlProblem(urls: readonly string[]): string | undefined {
  const problems: string[] = [];
  const schemes = new Set<string>();
  urls.forEach((text, index) => {
    const which = urls.length > 1 ? ` (server ${index + 1} of ${urls.length})` : '';
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      problems.push(`SLUICE_BROKER_URL${which} is not a URL: use nats://host:port`);
      return;
    }
    // Checked before anything that would quote the URL: it may hold a password.
    if (url.username || url.password) {
      problems.push(`SLUICE_BROKER_URL${which} holds credentials: put them in SLUICE_BROKER_CREDENTIALS_FILE`);
      return;
    }
    const scheme = url.protocol.toLowerCase();
    if (scheme !== 'nats:' && scheme !== 'tls:') {
      problems.push(`SLUICE_BROKER_URL${which} must start with nats:// or tls:// (got ${JSON.stringify(text)})`);
      return;
    }
    schemes.add(scheme);
    if (!url.hostname || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
      problems.push(`SLUICE_BROKER_URL${which} must be ${scheme}//host:port, nothing after it (got ${JSON.stringify(text)})`);
    }
  });
  if (schemes.size > 1) problems.push('SLUICE_BROKER_URL mixes nats:// and tls://: TLS is for every server or none');
  return problems.length ? problems.join('; ') : undefined;
}

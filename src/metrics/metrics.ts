/**
 * Every metric sluice exports, in one place (docs/metrics.md is the table; a test keeps the two
 * equal). Create one {@link Metrics} per process and pass it to whatever records: it owns its
 * Registry, so tests and embedded uses never collide on prom-client's global one.
 *
 * Label values are always bounded: store and outcome names, channels, rule indexes, interceptor
 * names, error codes, configured providers and partitions, route patterns, the ids of the
 * {@link TENANT_BACKLOG_TOP} tenants with the largest backlog (and `other`). Never a recipient, a
 * message id, a tenant-supplied string or a raw URL.
 * Durations are in seconds (Prometheus convention); `observeMs` converts.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Fine below 1 ms (in-process and fast Redis decisions), up to 1 s. */
export const DECISION_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** Vendor HTTP/SMTP calls: tens of ms to tens of seconds. */
export const PROVIDER_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** API requests: sub-millisecond to a few seconds. */
export const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** `sluice_breaker_state` values. */
export const BREAKER_STATE_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const;

/** One row of the messages-by-status gauge. */
export interface MessageCount {
  channel: string;
  status: string;
  count: number;
}

/** One tenant channel's due backlog, as `sluice_tenant_backlog` is computed from. */
export interface TenantChannelBacklog {
  tenantId: string;
  channel: string;
  due: number;
}

/** How many tenants `sluice_tenant_backlog` names; the others are summed under `tenant="other"`. */
export const TENANT_BACKLOG_TOP = 10;

/** Returns the current message counts; called on every scrape, so keep it cheap (one GROUP BY). */
export type MessageCountsProvider = () => Promise<Iterable<MessageCount>> | Iterable<MessageCount>;

export interface MetricsOptions {
  /** Also export prom-client's default `process_*` and `nodejs_*` metrics. Default true. */
  defaultMetrics?: boolean;
  /** Labels put on every series, e.g. `{ instance_role: 'api' }`. */
  defaultLabels?: Record<string, string>;
}

export class Metrics {
  readonly registry = new Registry();

  // Limiter decisions
  readonly decisionDuration: Histogram<'store' | 'outcome'>;
  readonly decisions: Counter<'outcome' | 'channel' | 'rule'>;
  readonly admissionRejections: Counter<'interceptor' | 'code'>;
  readonly riskDecisions: Counter<'action' | 'rule' | 'outcome' | 'shadow'>;
  readonly fraudDecisions: Counter<'rule' | 'outcome' | 'mode'>;

  // Redis and degradation
  readonly redisCommandDuration: Histogram<'operation'>;
  readonly redisErrors: Counter<'operation' | 'kind'>;
  readonly redisSlowCalls: Counter<string>;
  readonly breakerState: Gauge<string>;
  readonly breakerTransitions: Counter<'to'>;
  readonly degradedDecisions: Counter<'mode' | 'reason'>;

  // Configuration
  readonly configCacheLookups: Counter<'level' | 'result'>;
  readonly limiterCacheLookups: Counter<'cache' | 'result'>;

  // Delivery
  readonly messages: Gauge<'channel' | 'status'>;
  readonly dueIndexBacklog: Gauge<'partition'>;
  readonly tenantBacklog: Gauge<'tenant' | 'channel'>;
  readonly lockHeld: Gauge<'partition'>;
  readonly sends: Counter<'provider' | 'outcome'>;
  readonly providerDuration: Histogram<'provider'>;
  readonly queueWait: Histogram<'channel' | 'lane'>;
  readonly retries: Counter<'channel'>;
  readonly messagesPurged: Counter;
  readonly webhookEvents: Counter<'type' | 'outcome'>;
  readonly webhookEventLatency: Histogram<'type'>;
  readonly webhookEventsPending: Gauge<'partition'>;
  readonly receipts: Counter<'provider' | 'outcome' | 'status'>;

  // The recipient's word (docs/compliance.md)
  readonly consentChanges: Counter<'channel' | 'action' | 'source'>;
  readonly suppressedSends: Counter<'channel' | 'stage' | 'source'>;

  // The broker hand-off (SLUICE_BROKER_URL)
  readonly brokerHandoffs: Counter<'channel'>;
  readonly brokerPublishFailures: Counter<'what'>;
  readonly brokerRedeliveries: Counter<'channel'>;
  readonly brokerExhausted: Counter<'channel'>;
  readonly brokerConnected: Gauge;
  readonly busEventsPublished: Counter;

  // HTTP and the exporter itself
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly httpConnectionsRefused: Counter<'cap'>;
  readonly authFailures: Counter<'realm' | 'outcome'>;
  readonly collectErrors: Counter<'collector'>;

  private messageCounts: MessageCountsProvider | undefined;
  private breakerStateOf: (() => keyof typeof BREAKER_STATE_VALUE) | undefined;
  private limiterMemoryOf: (() => { subjects: number; evictedLive: number }) | undefined;
  private limiterEvictionsSeen = 0;
  readonly limiterMemorySubjects: Gauge;
  readonly limiterMemoryEvictions: Counter;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    if (options.defaultLabels) this.registry.setDefaultLabels(options.defaultLabels);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });

    this.decisionDuration = new Histogram({
      name: 'sluice_decision_duration_seconds',
      help: 'Time of one limiter decision, by store (redis|memory) and outcome (OK|BANNED|RATE_LIMITED|error|timeout).',
      labelNames: ['store', 'outcome'],
      buckets: DECISION_BUCKETS,
      registers,
    });
    this.decisions = new Counter({
      name: 'sluice_decisions_total',
      help: 'Limiter decisions by outcome (OK|BANNED|RATE_LIMITED), channel and index of the rule hit (none if no rule hit).',
      labelNames: ['outcome', 'channel', 'rule'],
      registers,
    });
    this.riskDecisions = new Counter({
      name: 'sluice_risk_decisions_total',
      help: 'Risk checks recorded, per rule: what the rule alone decided (allow|review|deny), by action, rule name and whether the rule is in shadow mode.',
      labelNames: ['action', 'rule', 'outcome', 'shadow'],
      registers,
    });
    this.fraudDecisions = new Counter({
      name: 'sluice_fraud_decisions_total',
      help: 'SMS pumping protection: what each rule decided on each SMS of a tenant with a policy, by rule (country|prefix|conversion|spend), outcome (pass|refuse|would_refuse) and mode (enforce|monitor).',
      labelNames: ['rule', 'outcome', 'mode'],
      registers,
    });
    this.admissionRejections = new Counter({
      name: 'sluice_admission_rejections_total',
      help: 'Requests rejected by the admission chain, by interceptor and error code.',
      labelNames: ['interceptor', 'code'],
      registers,
    });

    this.redisCommandDuration = new Histogram({
      name: 'sluice_redis_command_duration_seconds',
      help: 'Time of one Redis call (script or command), by operation; failed and timed-out calls included.',
      labelNames: ['operation'],
      buckets: DECISION_BUCKETS,
      registers,
    });
    this.redisErrors = new Counter({
      name: 'sluice_redis_errors_total',
      help: 'Redis calls that failed, by operation and kind (error|timeout).',
      labelNames: ['operation', 'kind'],
      registers,
    });
    this.redisSlowCalls = new Counter({
      name: 'sluice_redis_slow_calls_total',
      help: 'Limiter Redis calls slower than the alert threshold (SLUICE_DEGRADE_ALERT_MS).',
      registers,
    });
    const self = this;
    this.breakerState = new Gauge({
      name: 'sluice_breaker_state',
      help: 'State of the limiter circuit breaker: 0 closed (Redis decides), 1 half-open (probing), 2 open (fallback decides).',
      registers,
      // Read at each scrape, not only set on transitions: an open breaker turns half-open with
      // time alone, and an idle instance must not report "open" (and fire its alert) for good.
      collect() {
        if (self.breakerStateOf) this.set(BREAKER_STATE_VALUE[self.breakerStateOf()]);
      },
    });
    this.limiterMemorySubjects = new Gauge({
      name: 'sluice_limiter_memory_subjects',
      help: 'Subjects (recipients, quota buckets, risk subjects) held by the in-process limiter; bounded by SLUICE_LIMITER_MEMORY_MAX.',
      registers,
      collect() {
        if (self.limiterMemoryOf) this.set(self.limiterMemoryOf().subjects);
      },
    });
    this.limiterMemoryEvictions = new Counter({
      name: 'sluice_limiter_memory_evictions_total',
      help: 'Subjects the in-process limiter dropped at SLUICE_LIMITER_MEMORY_MAX while their counts still mattered.',
      registers,
      collect() {
        if (!self.limiterMemoryOf) return;
        const { evictedLive } = self.limiterMemoryOf();
        if (evictedLive > self.limiterEvictionsSeen) this.inc(evictedLive - self.limiterEvictionsSeen);
        self.limiterEvictionsSeen = evictedLive;
      },
    });
    this.breakerTransitions = new Counter({
      name: 'sluice_breaker_transitions_total',
      help: 'Circuit breaker state changes, by the state entered (closed|half-open|open); catches openings shorter than a scrape interval.',
      labelNames: ['to'],
      registers,
    });
    this.degradedDecisions = new Counter({
      name: 'sluice_degraded_decisions_total',
      help: 'Decisions made by the fallback instead of Redis, by mode used (local|static|allow|deny) and reason (open|error|timeout).',
      labelNames: ['mode', 'reason'],
      registers,
    });

    this.limiterCacheLookups = new Counter({
      name: 'sluice_limiter_cache_lookups_total',
      help: 'Limiter decisions answered in process (hit) or by Redis (miss), by cache (ban|lease).',
      labelNames: ['cache', 'result'],
      registers,
    });
    this.configCacheLookups = new Counter({
      name: 'sluice_config_cache_lookups_total',
      help: 'Configuration reads by cache level (local|redis|sql) and result (hit|miss).',
      labelNames: ['level', 'result'],
      registers,
    });

    this.messages = new Gauge({
      name: 'sluice_messages',
      help: 'Messages not yet finished, by channel and status (queued|scheduled|sending); counted on each scrape.',
      labelNames: ['channel', 'status'],
      registers,
      async collect() {
        await self.collectMessageCounts(this);
      },
    });
    this.dueIndexBacklog = new Gauge({
      name: 'sluice_due_index_backlog',
      help: 'Entries in the due index that are due now and not yet claimed, by partition.',
      labelNames: ['partition'],
      registers,
    });
    this.tenantBacklog = new Gauge({
      name: 'sluice_tenant_backlog',
      help: `Due messages (queued or scheduled, due now) of the ${TENANT_BACKLOG_TOP} tenants with the largest due backlog, by tenant id and channel; every other tenant summed under tenant="other". Refreshed every 15 s by workers.`,
      labelNames: ['tenant', 'channel'],
      registers,
    });
    this.lockHeld = new Gauge({
      name: 'sluice_lock_held',
      help: 'Whether this instance holds the dispatcher lock of a partition (1 held, 0 not).',
      labelNames: ['partition'],
      registers,
    });
    this.sends = new Counter({
      name: 'sluice_sends_total',
      help: 'Send attempts to providers, by provider (its configured name) and outcome (sent|retryable|permanent).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    this.providerDuration = new Histogram({
      name: 'sluice_provider_request_duration_seconds',
      help: 'Time of one request to a provider (pace wait excluded), whatever its outcome, by provider (its configured name).',
      labelNames: ['provider'],
      buckets: PROVIDER_BUCKETS,
      registers,
    });
    this.queueWait = new Histogram({
      name: 'sluice_queue_wait_seconds',
      help: "Time from when a message was due to its attempt's request to the provider (claim, hand-off and pace wait), by channel and lane.",
      labelNames: ['channel', 'lane'],
      buckets: PROVIDER_BUCKETS,
      registers,
    });
    this.messagesPurged = new Counter({
      name: 'sluice_messages_purged_total',
      help: 'Finished messages deleted (with their attempts) past SLUICE_RETENTION_DAYS.',
      registers,
    });
    this.webhookEvents = new Counter({
      name: 'sluice_webhook_events_total',
      help: 'Posts of status events to tenant webhooks, by event type and outcome (delivered|retried|failed).',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.webhookEventLatency = new Histogram({
      name: 'sluice_webhook_event_latency_seconds',
      help: "Time from a message's status change to its event's 2xx answer, by event type.",
      labelNames: ['type'],
      buckets: PROVIDER_BUCKETS,
      registers,
    });
    this.webhookEventsPending = new Gauge({
      name: 'sluice_webhook_events_pending',
      help: 'Pending webhook events (not yet answered 2xx nor given up) of the partition, reported by its holder after each pass.',
      labelNames: ['partition'],
      registers,
    });
    this.receipts = new Counter({
      name: 'sluice_receipts_total',
      help: 'Delivery receipts pushed by vendors, by provider (its name), outcome (applied|pending|duplicate|unreadable) and status (delivered|undelivered|none).',
      labelNames: ['provider', 'outcome', 'status'],
      registers,
    });
    this.consentChanges = new Counter({
      name: 'sluice_consent_changes_total',
      help: 'Opt-outs and suppressions added (action=suppressed) and opt-ins and suppressions lifted (action=unsuppressed), by channel and source (keyword|unsubscribe|bounce|complaint|api|admin).',
      labelNames: ['channel', 'action', 'source'],
      registers,
    });
    this.suppressedSends = new Counter({
      name: 'sluice_suppressed_sends_total',
      help: "Sends stopped by a suppression, by channel, stage (admission: refused RECIPIENT_SUPPRESSED; delivery: accepted, then suppressed before it left) and the suppression's source.",
      labelNames: ['channel', 'stage', 'source'],
      registers,
    });
    this.retries = new Counter({
      name: 'sluice_retries_total',
      help: 'Send attempts scheduled for retry after a failure, by channel.',
      labelNames: ['channel'],
      registers,
    });

    this.brokerHandoffs = new Counter({
      name: 'sluice_broker_handoffs_total',
      help: "Due messages published to the broker (first hand-offs and the sweep's republishes), by channel.",
      labelNames: ['channel'],
      registers,
    });
    this.brokerPublishFailures = new Counter({
      name: 'sluice_broker_publish_failures_total',
      help: 'Publishes the broker did not take (down, unreachable, refused), by what: due (a message, handed off again later) or event (a status event, kept in the outbox).',
      labelNames: ['what'],
      registers,
    });
    this.brokerRedeliveries = new Counter({
      name: 'sluice_broker_redeliveries_total',
      help: "Deliveries of a job after its first (a retry nak'ed with its delay, or a job whose worker died or went silent), by channel.",
      labelNames: ['channel'],
      registers,
    });
    this.brokerExhausted = new Counter({
      name: 'sluice_broker_exhausted_total',
      help: "Jobs that reached the broker's delivery limit (SLUICE_BROKER_MAX_DELIVER), by channel: their message failed, or (a failed handler) was left to the sweep.",
      labelNames: ['channel'],
      registers,
    });
    this.brokerConnected = new Gauge({
      name: 'sluice_broker_connected',
      help: 'Whether this instance is connected to the broker (1) or not (0).',
      registers,
    });
    this.busEventsPublished = new Counter({
      name: 'sluice_bus_events_published_total',
      help: "Status events published on the broker's events stream (from the bus outbox).",
      registers,
    });

    this.httpRequestDuration = new Histogram({
      name: 'sluice_http_request_duration_seconds',
      help: 'HTTP request time, by method, route pattern (never the raw URL) and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.httpConnectionsRefused = new Counter({
      name: 'sluice_http_connections_refused_total',
      help: 'Connections closed as they were accepted, by the cap they were over: max (SLUICE_HTTP_MAX_CONNECTIONS) or per_ip.',
      labelNames: ['cap'],
      registers,
    });
    this.authFailures = new Counter({
      name: 'sluice_auth_failures_total',
      help: 'Requests refused by authentication, by realm (admin|tenant) and outcome: missing (no credential), wrong (a wrong one, counted against its address: SLUICE_AUTH_FAILURE_LIMIT), throttled (429 AUTH_THROTTLED, its credential unchecked).',
      labelNames: ['realm', 'outcome'],
      registers,
    });
    this.collectErrors = new Counter({
      name: 'sluice_metrics_collect_errors_total',
      help: 'Scrape-time collectors that failed (their gauge keeps its last values), by collector.',
      labelNames: ['collector'],
      registers,
    });
  }

  /** Observe a duration given in milliseconds on a seconds histogram. */
  static observeMs<T extends string>(histogram: Histogram<T>, labels: Partial<Record<T, string | number>>, ms: number): void {
    histogram.observe(labels, ms / 1000);
  }

  /** Set the callback that counts messages by channel and status at each scrape. */
  setMessageCounts(provider: MessageCountsProvider | undefined): void {
    this.messageCounts = provider;
  }

  /**
   * Replaces `sluice_tenant_backlog` with `rows` (every tenant channel with a due backlog): the
   * {@link TENANT_BACKLOG_TOP} tenants with the most due messages over all channels (ties by id)
   * by id and channel, the rest summed per channel under `tenant="other"`. At most
   * (TOP + 1) × channels series, however many tenants there are.
   */
  setTenantBacklog(rows: Iterable<TenantChannelBacklog>): void {
    const totals = new Map<string, number>();
    const all = [...rows];
    for (const row of all) totals.set(row.tenantId, (totals.get(row.tenantId) ?? 0) + row.due);
    const top = new Set(
      [...totals]
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, TENANT_BACKLOG_TOP)
        .map(([tenantId]) => tenantId),
    );
    const series = new Map<string, { tenant: string; channel: string; due: number }>();
    for (const row of all) {
      const tenant = top.has(row.tenantId) ? row.tenantId : 'other';
      const key = `${tenant}\u0000${row.channel}`;
      const entry = series.get(key) ?? { tenant, channel: row.channel, due: 0 };
      entry.due += row.due;
      series.set(key, entry);
    }
    this.tenantBacklog.reset();
    for (const { tenant, channel, due } of series.values()) this.tenantBacklog.set({ tenant, channel }, due);
  }

  /** Set the callback that reads the limiter breaker's state at each scrape. */
  setBreakerState(provider: (() => keyof typeof BREAKER_STATE_VALUE) | undefined): void {
    this.breakerStateOf = provider;
  }

  /** Set the callback that reads the in-process limiter's size at each scrape. */
  setLimiterMemory(provider: (() => { subjects: number; evictedLive: number }) | undefined): void {
    this.limiterMemoryOf = provider;
  }

  /** The text exposition for `GET /metrics`. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The Content-Type of {@link text}. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** What the HTTP layer reads (`GET /metrics`) and reports (`MetricsEndpoint`, `http/deps.ts`). */
  httpEndpoint() {
    return {
      contentType: this.contentType,
      render: () => this.text(),
      observeHttp: (route: string, method: string, status: number, seconds: number) =>
        this.httpRequestDuration.observe({ route, method, status_code: String(status) }, seconds),
      observeAdmissionRejection: (interceptor: string, code: string) => this.admissionRejections.inc({ interceptor, code }),
      observeConnectionRefused: (cap: 'max' | 'per_ip') => this.httpConnectionsRefused.inc({ cap }),
      observeAuthFailure: (realm: 'admin' | 'tenant', outcome: 'missing' | 'wrong' | 'throttled') =>
        this.authFailures.inc({ realm, outcome }),
    };
  }

  private async collectMessageCounts(gauge: Gauge<'channel' | 'status'>): Promise<void> {
    if (!this.messageCounts) return;
    try {
      const rows = await this.messageCounts();
      // Reset only once the new counts are in: a failed query keeps the last known values.
      gauge.reset();
      for (const row of rows) gauge.set({ channel: row.channel, status: row.status }, row.count);
    } catch {
      this.collectErrors.inc({ collector: 'messages' });
    }
  }
}

/** sluice's Prometheus metrics: one registry per process (docs/metrics.md). */
export { recordDegradationEvent } from './degradation-metrics.js';
export {
  BREAKER_STATE_VALUE,
  DECISION_BUCKETS,
  HTTP_BUCKETS,
  type MessageCount,
  type MessageCountsProvider,
  Metrics,
  type MetricsOptions,
  PROVIDER_BUCKETS,
  TENANT_BACKLOG_TOP,
  type TenantChannelBacklog,
} from './metrics.js';

import { describe, expect, it } from 'vitest';
import { Metrics, recordDegradationEvent } from '../../src/metrics/index.js';
import { describeWithPromtool, runPromtool } from './promtool.js';

async function sampleMetrics(options?: ConstructorParameters<typeof Metrics>[0]): Promise<Metrics> {
  const metrics = new Metrics(options);
  metrics.decisions.inc({ outcome: 'OK', channel: 'sms', rule: 'none' });
  metrics.decisions.inc({ outcome: 'RATE_LIMITED', channel: 'sms', rule: '1' }, 2);
  Metrics.observeMs(metrics.decisionDuration, { store: 'redis', outcome: 'OK' }, 0.3);
  metrics.admissionRejections.inc({ interceptor: 'frequency', code: 'RATE_LIMITED' });
  metrics.sends.inc({ provider: 'aliyun-main', outcome: 'sent' });
  metrics.dueIndexBacklog.set({ partition: 'sms-0' }, 7);
  metrics.lockHeld.set({ partition: 'sms-0' }, 1);
  Metrics.observeMs(metrics.httpRequestDuration, { method: 'POST', route: '/v1/messages', status_code: '202' }, 4);
  recordDegradationEvent(metrics, { type: 'state', from: 'closed', to: 'open' });
  recordDegradationEvent(metrics, { type: 'fallback', mode: 'local', reason: 'open' });
  recordDegradationEvent(metrics, { type: 'latency', store: 'primary', op: 'check', ms: 120, outcome: 'timeout' });
  recordDegradationEvent(metrics, { type: 'latency', store: 'local', op: 'check', ms: 0.02, outcome: 'OK' });
  recordDegradationEvent(metrics, { type: 'alert', ms: 120 });
  metrics.setMessageCounts(async () => [
    { channel: 'sms', status: 'queued', count: 3 },
    { channel: 'email', status: 'sending', count: 10 },
  ]);
  return metrics;
}

describe('metrics exposition', () => {
  it('exposes recorded samples in the text format', async () => {
    const text = await (await sampleMetrics()).text();
    expect(text).toContain('sluice_decisions_total{outcome="RATE_LIMITED",channel="sms",rule="1"} 2');
    // 0.3 ms lands in the 0.5 ms bucket, not in the 0.25 ms one.
    expect(text).toContain('sluice_decision_duration_seconds_bucket{le="0.00025",store="redis",outcome="OK"} 0');
    expect(text).toContain('sluice_decision_duration_seconds_bucket{le="0.0005",store="redis",outcome="OK"} 1');
    expect(text).toContain('sluice_breaker_state 2');
    expect(text).toContain('sluice_breaker_transitions_total{to="open"} 1');
    expect(text).toContain('sluice_degraded_decisions_total{mode="local",reason="open"} 1');
    expect(text).toContain('sluice_redis_errors_total{operation="limiter_check",kind="timeout"} 1');
    expect(text).toContain('sluice_redis_slow_calls_total 1');
    expect(text).toContain('sluice_decision_duration_seconds_count{store="memory",outcome="OK"} 1');
    expect(text).toContain('sluice_messages{channel="sms",status="queued"} 3');
    expect(text).toContain('sluice_messages{channel="email",status="sending"} 10');
    expect(text).toContain('sluice_lock_held{partition="sms-0"} 1');
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('collects message counts on each scrape and keeps the last values when the callback fails', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    let queued = 1;
    let fail = false;
    metrics.setMessageCounts(() => {
      if (fail) throw new Error('database down');
      return [{ channel: 'sms', status: 'queued', count: queued }];
    });
    expect(await metrics.text()).toContain('sluice_messages{channel="sms",status="queued"} 1');
    queued = 5;
    expect(await metrics.text()).toContain('sluice_messages{channel="sms",status="queued"} 5');
    fail = true;
    const text = await metrics.text();
    expect(text).toContain('sluice_messages{channel="sms",status="queued"} 5');
    expect(text).toContain('sluice_metrics_collect_errors_total{collector="messages"} 1');
  });

  it('keeps separate registries per Metrics object', async () => {
    const a = new Metrics({ defaultMetrics: false });
    const b = new Metrics({ defaultMetrics: false });
    a.retries.inc({ channel: 'sms' });
    expect(await a.text()).toContain('sluice_retries_total{channel="sms"} 1');
    expect(await b.text()).not.toContain('sluice_retries_total{channel="sms"}');
  });
});

describeWithPromtool('metrics exposition passes promtool check metrics', () => {
  it('sluice metrics lint clean', async () => {
    const { status, output } = runPromtool(['check', 'metrics'], await (await sampleMetrics({ defaultMetrics: false })).text());
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('with default metrics, only the three known prom-client names are flagged', async () => {
    const { status, output } = runPromtool(['check', 'metrics'], await (await sampleMetrics()).text());
    const findings = output.split('\n').filter(Boolean);
    for (const finding of findings) {
      expect(finding).toMatch(/^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/);
    }
    expect(status === 0 || findings.length > 0).toBe(true);
  });

  it('rejects a broken exposition (the check can fail)', () => {
    const { status } = runPromtool(['check', 'metrics'], '# TYPE sluice_x counter\nsluice_x{a="1" 1\n');
    expect(status).not.toBe(0);
  });
});

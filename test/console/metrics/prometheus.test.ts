import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpositionError, labelKey, parseExposition } from '../../../console/src/metrics/prometheus.js';
import { samplesOf } from '../../../console/src/metrics/rates.js';
import { Metrics } from '../../../src/metrics/index.js';
import { phone, sms, startApp, type TestApp } from '../../http/support.js';

/** Lines of an exposition that carry a sample (not blank, not a comment). */
const sampleLines = (text: string) => text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));

describe('parseExposition on the GET /metrics of a real sluice', () => {
  let t: TestApp;
  let text: string;
  beforeAll(async () => {
    t = await startApp();
    const tenant = await t.createTenant();
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 0 }] });
    expect((await t.send(tenant.apiKey, sms(phone(1)))).statusCode).toBe(202);
    expect((await t.send(tenant.apiKey, sms(phone(1)))).statusCode).toBe(429);
    expect((await t.send(tenant.apiKey, sms(phone(1)))).statusCode).toBe(429);
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    text = response.body;
  });
  afterAll(() => t.close());

  it('reads every sample line, in families of the declared types', () => {
    const families = parseExposition(text);
    const samples = [...families.values()].flatMap((family) => family.samples);
    expect(samples).toHaveLength(sampleLines(text).length);
    expect(families.get('sluice_decisions_total')?.type).toBe('counter');
    expect(families.get('sluice_breaker_state')?.type).toBe('gauge');
    expect(families.get('sluice_decision_duration_seconds')?.type).toBe('histogram');
    expect(families.get('sluice_decisions_total')?.help).toMatch(/^Limiter decisions by outcome/);
    // Histogram samples live in their base family, not in families of their own.
    expect(families.has('sluice_decision_duration_seconds_bucket')).toBe(false);
    expect([...families.values()].filter((family) => family.type === 'untyped')).toEqual([]);
  });

  it('gives the counters and histograms the values the requests made', () => {
    const families = parseExposition(text);
    const decisions = Object.fromEntries(samplesOf(families, 'sluice_decisions_total').map((s) => [labelKey(s.labels), s.value]));
    expect(decisions).toEqual({
      'channel="sms",outcome="OK",rule="none"': 1,
      'channel="sms",outcome="RATE_LIMITED",rule="0"': 2,
    });
    const rejections = samplesOf(families, 'sluice_admission_rejections_total');
    expect(rejections.map((s) => [s.labels, s.value])).toEqual([[{ interceptor: 'frequency', code: 'RATE_LIMITED' }, 2]]);
    const counts = samplesOf(families, 'sluice_decision_duration_seconds_count');
    expect(counts.reduce((sum, s) => sum + s.value, 0)).toBe(3);
    const infinite = samplesOf(families, 'sluice_decision_duration_seconds_bucket').filter((s) => s.labels.le === '+Inf');
    expect(infinite.reduce((sum, s) => sum + s.value, 0)).toBe(3);
    const start = samplesOf(families, 'process_start_time_seconds')[0]!.value;
    expect(Math.abs(start - Date.now() / 1000)).toBeLessThan(3600);
  });
});

describe('parseExposition on label values and values prom-client escapes', () => {
  it('reads back quotes, backslashes and newlines in label values, and infinities', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    // A risk rule's name is an operator's free text: the one label value that may hold anything.
    const rule = 'say "hi"\\ then\nleave, {now}=';
    metrics.riskDecisions.inc({ action: 'login', rule, outcome: 'deny', shadow: 'true' }, 4);
    metrics.decisionDuration.observe({ store: 'redis', outcome: 'OK' }, 0.0003);
    metrics.decisionDuration.observe({ store: 'redis', outcome: 'OK' }, 7);
    metrics.dueIndexBacklog.set({ partition: '3' }, -0.5);
    const families = parseExposition(await metrics.text());
    const risk = samplesOf(families, 'sluice_risk_decisions_total');
    expect(risk).toEqual([
      { name: 'sluice_risk_decisions_total', labels: { action: 'login', rule, outcome: 'deny', shadow: 'true' }, value: 4 },
    ]);
    const buckets = samplesOf(families, 'sluice_decision_duration_seconds_bucket');
    expect(buckets.find((s) => s.labels.le === '0.00025')?.value).toBe(0);
    expect(buckets.find((s) => s.labels.le === '0.0005')?.value).toBe(1);
    expect(buckets.find((s) => s.labels.le === '1')?.value).toBe(1);
    expect(buckets.find((s) => s.labels.le === '+Inf')?.value).toBe(2);
    expect(samplesOf(families, 'sluice_decision_duration_seconds_sum')[0]?.value).toBeCloseTo(7.0003, 9);
    expect(samplesOf(families, 'sluice_due_index_backlog')[0]?.value).toBe(-0.5);
  });

  it("reads a fresh registry's default metrics (prom-client writes an event-loop gauge not yet measured as `Nan`)", async () => {
    const text = await new Metrics().text();
    const samples = [...parseExposition(text).values()].flatMap((family) => family.samples);
    expect(samples).toHaveLength(sampleLines(text).length);
  });

  it('reads the special values, timestamps, spacing and HELP escapes of the format', () => {
    const families = parseExposition(
      [
        '# HELP x_seconds A help with a \\\\ backslash\\nand a newline',
        '# TYPE x_seconds summary',
        'x_seconds{quantile="0.5" , } NaN',
        'x_seconds_sum +Inf 1700000000000',
        'x_seconds_count\t-Inf',
        '# just a comment',
        'loose_metric 1.5e3',
        'specials{v="a"} Nan',
        'specials{v="b"} -inf',
        'specials{v="c"} +Infinity',
      ].join('\n'),
    );
    const summary = families.get('x_seconds')!;
    expect(summary.help).toBe('A help with a \\ backslash\nand a newline');
    expect(summary.samples.map((s) => s.value)).toEqual([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    expect(summary.samples[1]?.timestampMs).toBe(1700000000000);
    expect(families.get('specials')?.samples.map((s) => s.value)).toEqual([Number.NaN, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]);
    expect(families.get('loose_metric')).toEqual({
      name: 'loose_metric',
      type: 'untyped',
      help: '',
      samples: [{ name: 'loose_metric', labels: {}, value: 1500 }],
    });
  });

  it.each([
    ['a{b="c} 1', 1, /unterminated/],
    ['ok 1\na{b="\\t"} 1', 2, /bad escape/],
    ['a{b="1",b="2"} 1', 1, /twice/],
    ['a{b="1" c="2"} 1', 1, /expected , or }/],
    ['a', 1, /expected a value/],
    ['a 0x10', 1, /bad value/],
    ['a infinite', 1, /bad value/],
    ['a 1 2 3', 1, /expected a value/],
    ['# TYPE a meter', 1, /unknown type/],
    ['{a="b"} 1', 1, /metric name/],
  ])('refuses %j at its line', (text, line, reason) => {
    try {
      parseExposition(text);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ExpositionError);
      expect((error as ExpositionError).line).toBe(line);
      expect((error as Error).message).toMatch(reason);
    }
  });
});

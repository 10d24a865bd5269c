import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/index.js';
import { registryNames } from './registry-names.js';

/** First-column names of the table in docs/metrics.md (the rows whose name is a `sluice_*` metric). */
function documentedNames(): { sluice: Set<string>; prefixes: string[] } {
  const text = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
  const sluice = new Set<string>();
  const prefixes: string[] = [];
  for (const line of text.split('\n')) {
    const cell = /^\|\s*([^|]+?)\s*\|/.exec(line)?.[1];
    if (!cell) continue;
    for (const [, name] of cell.matchAll(/`([a-z_:][a-z0-9_:]*\*?)`/g)) {
      if (name!.endsWith('*')) prefixes.push(name!.slice(0, -1));
      else if (name!.startsWith('sluice_')) sluice.add(name!);
    }
  }
  return { sluice, prefixes };
}

describe('docs/metrics.md', () => {
  it('documents exactly the metrics of the registry', async () => {
    const registered = await registryNames(new Metrics());
    const { sluice, prefixes } = documentedNames();
    expect(sluice.size).toBeGreaterThan(10);
    const ours = [...registered].filter((name) => name.startsWith('sluice_'));
    expect([...sluice].sort()).toEqual(ours.sort());
    // Everything else is prom-client's defaults, documented by prefix.
    const others = [...registered].filter((name) => !name.startsWith('sluice_'));
    expect(others.length).toBeGreaterThan(0);
    expect(others.filter((name) => !prefixes.some((prefix) => name.startsWith(prefix)))).toEqual([]);
  });

  it('every metric has help text and only bounded label names', async () => {
    // Label names whose values come from fixed enums, configuration or route patterns; a new label
    // must be added here deliberately (never recipient, message id, tenant text or raw URL).
    // `lane` is transactional or bulk.
    // `action` (with `rule`) names a stored risk rule set: configuration, bounded by the sets an
    // operator stores; an action without a set is answered 404 before anything is counted. `cap`
    // is one of the two connection caps; `realm` admin or tenant. `tenant` (a tenant id) only on
    // sluice_tenant_backlog, which names the 10 largest backlogs and sums the rest as `other`.
    // `source` is a consent source (core/lifecycle.ts), `stage` admission or dispatch.
    const bounded = new Set(
      'type store outcome channel rule interceptor code operation kind to mode reason level result status partition provider method route status_code collector cache action shadow cap realm what lane source stage'.split(
        ' ',
      ),
    );
    const perMetric: Record<string, string[]> = { sluice_tenant_backlog: ['tenant'] };
    const metrics = new Metrics({ defaultMetrics: false }).registry.getMetricsAsArray() as unknown as {
      name: string;
      help: string;
      labelNames: string[];
    }[];
    expect(metrics.length).toBeGreaterThan(10);
    for (const metric of metrics) {
      expect(metric.name).toMatch(/^sluice_[a-z0-9_]+$/);
      expect(metric.help.length).toBeGreaterThan(20);
      expect(metric.labelNames.filter((label) => !bounded.has(label) && !perMetric[metric.name]?.includes(label))).toEqual([]);
    }
  });

  it('sluice_tenant_backlog names at most 10 tenants and "other", whatever the number of tenants', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      tenantId: `t${String(i).padStart(4, '0')}`,
      channel: i % 2 ? 'sms' : 'email',
      due: i + 1,
    }));
    metrics.setTenantBacklog(rows);
    const values = (await metrics.tenantBacklog.get()).values;
    const tenants = new Set(values.map((value) => value.labels.tenant));
    expect(tenants.size).toBe(11);
    expect(tenants.has('t0999') && tenants.has('t0990') && !tenants.has('t0989')).toBe(true);
    expect(values.reduce((sum, value) => sum + value.value, 0)).toBe((1000 * 1001) / 2);
    metrics.setTenantBacklog([]);
    expect((await metrics.tenantBacklog.get()).values).toEqual([]);
  });
});

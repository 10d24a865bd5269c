import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/index.js';
import { describeWithPromtool, runPromtool } from './promtool.js';
import { familyOf, registryNames } from './registry-names.js';

/** Grafana's reference to the dashboard's data source variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template
const DATASOURCE_UID = '${datasource}';

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr?: string; datasource?: { uid: string } }[];
  panels?: Panel[];
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

/** Metric names an expression refers to: our own and prom-client's default families. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b(?:sluice|process|nodejs)_[a-zA-Z0-9_]*/g)].map((match) => match[0]);
}

/** Every `expr:` of the rules file (each kept on one line there). */
function ruleExpressions(): string[] {
  const text = readFileSync(root('dashboards/alerts.yml'), 'utf8');
  return [...text.matchAll(/^\s*expr:\s*(.+)$/gm)].map((match) => match[1]!);
}

describe('dashboards/sluice.json', () => {
  const dashboard = JSON.parse(readFileSync(root('dashboards/sluice.json'), 'utf8'));
  const panels = allPanels(dashboard.panels);

  it('is a Grafana dashboard with a Prometheus data source variable', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(typeof dashboard.uid).toBe('string');
    const variable = dashboard.templating.list.find((v: { type: string }) => v.type === 'datasource');
    expect(variable).toMatchObject({ name: 'datasource', query: 'prometheus' });
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has the panels operators need', () => {
    const exprs = panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr ?? ''));
    const needs: [string, RegExp][] = [
      ['decisions/s by outcome', /sum by \(outcome\) \(rate\(sluice_decisions_total/],
      ['p99 decision latency', /histogram_quantile\(0\.99, .*sluice_decision_duration_seconds_bucket/],
      ['rejections by code', /sum by \(code\) \(rate\(sluice_admission_rejections_total/],
      ['breaker state', /sluice_breaker_state/],
      ['due-index backlog', /sluice_due_index_backlog/],
      ['sends by provider and outcome', /sum by \(provider, outcome\) \(rate\(sluice_sends_total/],
    ];
    for (const [what, pattern] of needs)
      expect(
        exprs.some((expr) => pattern.test(expr)),
        what,
      ).toBe(true);
  });

  it('queries only metrics that exist, through the data source variable', async () => {
    const names = await registryNames(new Metrics());
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, panel.title).toBe(DATASOURCE_UID);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        const used = metricNames(target.expr ?? '');
        expect(used.length, `${panel.title}: ${target.expr}`).toBeGreaterThan(0);
        for (const name of used) expect(names.has(familyOf(name, names)), `${panel.title}: ${name}`).toBe(true);
      }
    }
  });
});

describe('dashboards/alerts.yml', () => {
  it('has the four alerts and names only metrics that exist', async () => {
    const text = readFileSync(root('dashboards/alerts.yml'), 'utf8');
    for (const alert of ['SluiceRedisSlow', 'SluiceBreakerOpen', 'SluiceDueBacklogGrowing', 'SluiceSendsFailing']) {
      expect(text).toContain(`alert: ${alert}`);
    }
    const names = await registryNames(new Metrics());
    const exprs = ruleExpressions();
    expect(exprs).toHaveLength(4);
    for (const expr of exprs) {
      const used = metricNames(expr);
      expect(used.length, expr).toBeGreaterThan(0);
      for (const name of used) expect(names.has(familyOf(name, names)), name).toBe(true);
    }
  });
});

describeWithPromtool('alert rules pass promtool', () => {
  it('promtool check rules', () => {
    const { status, output } = runPromtool(['check', 'rules', root('dashboards/alerts.yml')]);
    expect(output).toContain('SUCCESS: 4 rules found');
    expect(status).toBe(0);
  });

  it('promtool test rules: each alert fires when it should and not before', () => {
    const { status, output } = runPromtool(['test', 'rules', root('test/metrics/alerts.rules-test.yml')]);
    expect(output).toContain('SUCCESS');
    expect(status).toBe(0);
  });
});

import type { Metrics } from '../../src/metrics/index.js';

/** Names of every metric family in the registry (histograms by base name). */
export async function registryNames(metrics: Metrics): Promise<Set<string>> {
  const families = await metrics.registry.getMetricsAsJSON();
  return new Set(families.map((family) => family.name));
}

/** A series name in an expression back to its family: `x_bucket` / `x_sum` / `x_count` → `x` when `x` exists. */
export function familyOf(series: string, names: Set<string>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (series.endsWith(suffix) && names.has(series.slice(0, -suffix.length))) return series.slice(0, -suffix.length);
  }
  return series;
}

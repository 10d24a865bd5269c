/** Live charts of the server's own metrics (the instance that answers `/metrics`). */
import { MetricsPage } from '../metrics/page.js';
import { fetchMetrics } from '../session.js';

export function MetricsScreen() {
  return (
    <>
      <h1>Live charts</h1>
      <MetricsPage fetchMetrics={fetchMetrics} />
    </>
  );
}

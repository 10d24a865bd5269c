/**
 * /readyz against real Redis servers: a standalone one and a 3-master cluster, whose state it
 * reads (`CLUSTER INFO`), since a node of a failed cluster still answers PING.
 */
import { expect, it } from 'vitest';
import { describeWith, servers } from '../support/servers.js';
import { startApp } from './support.js';

describeWith(servers.redisCluster, 'SLUICE_TEST_REDIS_CLUSTER', '/readyz on Redis Cluster', () => {
  it('reads the cluster state: a healthy cluster is reachable', async () => {
    const nodes = servers.redisCluster!.map(({ host, port }) => `${host}:${port}`).join(',');
    const app = await startApp({ SLUICE_REDIS_CLUSTER_NODES: nodes, SLUICE_REDIS_KEY_PREFIX: `ready-${Date.now()}:` });
    try {
      const ready = await app.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode, ready.body).toBe(200);
      expect(ready.json().checks.redis).toEqual({ ok: true, detail: 'reachable' });
    } finally {
      await app.close();
    }
  });
});

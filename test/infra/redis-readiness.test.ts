import { Cluster, type Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisReadiness } from '../../src/infra/redis-client.js';

/** An object that is a `Cluster` to `instanceof`, answering PING and CLUSTER INFO as told. */
function fakeCluster(info: () => Promise<string>): Cluster {
  return Object.assign(Object.create(Cluster.prototype) as Cluster, {
    ping: async () => 'PONG',
    cluster: async () => info(),
  });
}

describe('redisReadiness', () => {
  it('a server that answers PING is reachable', async () => {
    const server = { ping: async () => 'PONG' } as unknown as Redis;
    expect(await redisReadiness(server, 100)).toBe('reachable');
  });

  it("reads a cluster's state: a failed cluster's nodes still answer PING", async () => {
    expect(
      await redisReadiness(
        fakeCluster(async () => 'cluster_state:ok\r\ncluster_slots_assigned:16384\r\n'),
        100,
      ),
    ).toBe('reachable');
    expect(
      await redisReadiness(
        fakeCluster(async () => 'cluster_state:fail\r\n'),
        100,
      ),
    ).toMatch(/^cluster state fail: /);
  });

  it('gives up within its deadline on a Redis that does not answer', async () => {
    const frozen = { ping: () => new Promise(() => undefined) } as unknown as Redis;
    await expect(redisReadiness(frozen, 50)).rejects.toThrow('ping timed out');
    await expect(
      redisReadiness(
        fakeCluster(() => new Promise(() => undefined)),
        50,
      ),
    ).rejects.toThrow('CLUSTER INFO timed out');
  });
});

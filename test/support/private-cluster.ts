/**
 * A Redis Cluster of the caller's own: `masters` redis-server processes (plus `replicasPerMaster`
 * replicas each) on free loopback ports, slots split evenly, built with CLUSTER ADDSLOTSRANGE /
 * MEET / REPLICATE (redis-cli --cluster create refuses fewer than 3 masters). For the failover
 * test (test/faults/cluster-failover.int.test.ts) and the scale benchmark (bench/limiter-cluster.ts):
 * nodes can be killed with SIGKILL; `stop()` kills every node and removes the config files.
 * Needs SLUICE_TEST_REDIS_BIN (or redis-server on PATH).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './net.js';
import { spawnRedisServer } from './private-redis.js';
import { until } from './wait.js';

export interface ClusterNode {
  readonly port: number;
  readonly pid: number;
  /** The node id (CLUSTER MYID). */
  readonly id: string;
  /** The master's id for a replica, undefined for a master (as built; failovers change roles). */
  readonly replicaOf: string | undefined;
  readonly child: ChildProcess;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
}

export interface PrivateCluster {
  readonly nodes: readonly ClusterNode[];
  readonly masters: readonly ClusterNode[];
  /** `{host, port}` of every master, for `new Cluster(...)`. */
  readonly startupNodes: { host: string; port: number }[];
  /** A client of one node (the caller disconnects it). */
  client(node: ClusterNode): Redis;
  stop(): Promise<void>;
}

export interface PrivateClusterOptions {
  masters: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout, ms (default 2000). */
  nodeTimeoutMs?: number;
  bin?: string;
  /** More redis-server options for every node. */
  extraArgs?: readonly string[];
}

const SLOTS = 16_384;

/** A free port whose cluster bus port (+10000) is free too and below 65536. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 >= 65_536) continue;
    return port;
  }
}

async function waitFor(what: string, timeoutMs: number, test: () => Promise<boolean>): Promise<void> {
  await until(test, { timeoutMs, intervalMs: 100, what: `private cluster: ${what}` });
}

export async function startPrivateCluster(options: PrivateClusterOptions): Promise<PrivateCluster> {
  const bin = options.bin ?? process.env.SLUICE_TEST_REDIS_BIN ?? 'redis-server';
  const replicas = options.replicasPerMaster ?? 0;
  const count = options.masters * (1 + replicas);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cluster-'));
  const children: ChildProcess[] = [];
  const clients: Redis[] = [];
  const killAll = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
  };
  try {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await freeClusterPort();
      const child = await spawnRedisServer(bin, port, [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        String(options.nodeTimeoutMs ?? 2000),
        '--dir',
        dir,
        // A lone master never learns its address from a MEET: CLUSTER SLOTS would name host ''.
        '--cluster-announce-ip',
        '127.0.0.1',
        ...(options.extraArgs ?? []),
      ]);
      if (!child) continue; // the port (or its bus port) was taken: another one
      children.push(child);
      ports.push(port);
    }
    for (const port of ports) clients.push(new Redis({ port, host: '127.0.0.1', lazyConnect: false }));
    const ids = await Promise.all(clients.map((client) => client.call('CLUSTER', 'MYID') as Promise<string>));
    for (let m = 0; m < options.masters; m++) {
      const first = Math.floor((m * SLOTS) / options.masters);
      const last = Math.floor(((m + 1) * SLOTS) / options.masters) - 1;
      await clients[m]!.call('CLUSTER', 'ADDSLOTSRANGE', String(first), String(last));
    }
    for (let i = 1; i < count; i++) await clients[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(ports[i]));
    await waitFor('every node meeting every other', 20_000, async () => {
      const views = await Promise.all(clients.map((client) => client.call('CLUSTER', 'NODES') as Promise<string>));
      return views.every((view) => view.trim().split('\n').length === count && !view.includes('handshake'));
    });
    const replicaOf: (string | undefined)[] = ports.map(() => undefined);
    for (let i = options.masters; i < count; i++) {
      const master = (i - options.masters) % options.masters;
      replicaOf[i] = ids[master];
      await clients[i]!.call('CLUSTER', 'REPLICATE', ids[master]!);
    }
    await waitFor('cluster_state:ok on every node', 30_000, async () => {
      const infos = await Promise.all(clients.map((client) => client.call('CLUSTER', 'INFO') as Promise<string>));
      return infos.every((info) => info.includes('cluster_state:ok'));
    });
    await waitFor('every replica in sync', 30_000, async () => {
      const infos = await Promise.all(clients.slice(options.masters).map((client) => client.info('replication')));
      return infos.every((info) => info.includes('master_link_status:up'));
    });
    for (const client of clients) client.disconnect();
    const nodes: ClusterNode[] = ports.map((port, i) => {
      const child = children[i]!;
      return {
        port,
        pid: child.pid!,
        id: ids[i]!,
        replicaOf: replicaOf[i],
        child,
        kill: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = once(child, 'exit');
          child.kill('SIGKILL');
          await exited;
        },
      };
    });
    const masters = nodes.slice(0, options.masters);
    return {
      nodes,
      masters,
      startupNodes: masters.map((node) => ({ host: '127.0.0.1', port: node.port })),
      client: (node) => new Redis({ port: node.port, host: '127.0.0.1', maxRetriesPerRequest: 1 }),
      stop: async () => {
        await killAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const client of clients) client.disconnect();
    await killAll();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

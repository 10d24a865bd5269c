/**
 * A nats-server of the test's own (SLUICE_TEST_NATS_BIN) with JetStream, on a free loopback port,
 * its store in a temp folder and its monitoring endpoint on (`/jsz`), for tests that kill it,
 * wipe its store or give it credentials. `restart()` starts it again on the same ports.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net.js';

export const privateNatsBin = process.env.SLUICE_TEST_NATS_BIN || undefined;

export interface PrivateNats {
  url: string;
  port: number;
  /** `http://127.0.0.1:PORT` of the monitoring endpoint. */
  monitorUrl: string;
  storeDir: string;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same ports (and the same store, unless it was wiped meanwhile). */
  restart(): Promise<void>;
  /** Kills it and removes its store. */
  stop(): Promise<void>;
}

/** Starts nats-server and resolves it once it logs that it is ready, or undefined if it exited first (a port taken). */
async function spawnNats(bin: string, args: readonly string[]): Promise<ChildProcess | undefined> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const ready = await new Promise<boolean>((resolve) => {
    let output = '';
    const timer = setTimeout(() => resolve(false), 10_000);
    // nats-server logs to standard error.
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server is ready')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!ready) {
    child.kill('SIGKILL');
    return undefined;
  }
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** `extraArgs`: more nats-server options, e.g. `['--user', 'u', '--pass', 'p']`. */
export async function startPrivateNats(bin = privateNatsBin, extraArgs: readonly string[] = []): Promise<PrivateNats> {
  if (bin === undefined) throw new Error('SLUICE_TEST_NATS_BIN is not set');
  const storeDir = mkdtempSync(join(tmpdir(), 'sluice-nats-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const monitorPort = await freePort();
    const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), '-sd', storeDir, ...extraArgs];
    let child = await spawnNats(bin, args);
    if (child === undefined) continue;
    const kill = async () => {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    };
    return {
      url: `nats://127.0.0.1:${port}`,
      port,
      monitorUrl: `http://127.0.0.1:${monitorPort}`,
      storeDir,
      kill,
      restart: async () => {
        await kill();
        child = await spawnNats(bin, args);
        if (child === undefined) throw new Error(`could not restart nats-server on port ${port}`);
      },
      stop: async () => {
        await kill();
        rmSync(storeDir, { recursive: true, force: true });
      },
    };
  }
  rmSync(storeDir, { recursive: true, force: true });
  throw new Error('could not start a private nats-server');
}

export interface PrivateNatsCluster {
  /** Each node's `nats://127.0.0.1:PORT`. */
  urls: string[];
  /** Node names (`n1`…), as JetStream reports its leaders. */
  names: string[];
  /** Each node's `http://127.0.0.1:PORT` monitoring endpoint (`/jsz`), by name. */
  monitorUrls: Map<string, string>;
  /** SIGKILLs the node of that name. */
  kill(name: string): Promise<void>;
  /** Starts a killed node again on its ports and store (it catches up with the others). */
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A JetStream cluster of `size` nodes on loopback ports; resolves once its meta leader is elected
 * (streams can be created then).
 */
export async function startPrivateNatsCluster(bin = privateNatsBin, size = 3): Promise<PrivateNatsCluster> {
  if (bin === undefined) throw new Error('SLUICE_TEST_NATS_BIN is not set');
  const root = mkdtempSync(join(tmpdir(), 'sluice-nats-cluster-'));
  const nodes = await Promise.all(
    Array.from({ length: size }, async (_, index) => ({
      name: `n${index + 1}`,
      port: await freePort(),
      clusterPort: await freePort(),
      monitorPort: await freePort(),
    })),
  );
  const children = new Map<string, ChildProcess>();
  const stopAll = async () => {
    await Promise.all(
      [...children.values()].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
    rmSync(root, { recursive: true, force: true });
  };
  const routes = nodes.map((node) => `nats://127.0.0.1:${node.clusterPort}`).join(',');
  const argsOf = (node: (typeof nodes)[number]) => [
    '-js',
    '-a',
    '127.0.0.1',
    '-p',
    String(node.port),
    '-m',
    String(node.monitorPort),
    '-sd',
    join(root, node.name),
    '--server_name',
    node.name,
    '--cluster_name',
    'sluice-test',
    '--cluster',
    `nats://127.0.0.1:${node.clusterPort}`,
    '--routes',
    routes,
  ];
  const started = await Promise.all(nodes.map((node) => spawnNats(bin, argsOf(node))));
  started.forEach((child, index) => {
    if (child) children.set(nodes[index]!.name, child);
  });
  if (children.size < size) {
    await stopAll();
    throw new Error('could not start the nats-server cluster (a port was taken)');
  }
  const deadline = Date.now() + 20_000;
  for (;;) {
    const jsz = (await fetch(`http://127.0.0.1:${nodes[0]!.monitorPort}/jsz`)
      .then((response) => response.json())
      .catch(() => ({}))) as { meta_cluster?: { leader?: string; cluster_size?: number } };
    if (jsz.meta_cluster?.leader && jsz.meta_cluster.cluster_size === size) break;
    if (Date.now() > deadline) {
      await stopAll();
      throw new Error('the nats-server cluster elected no JetStream leader within 20 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const kill = async (name: string) => {
    const child = children.get(name);
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  return {
    urls: nodes.map((node) => `nats://127.0.0.1:${node.port}`),
    names: nodes.map((node) => node.name),
    monitorUrls: new Map(nodes.map((node) => [node.name, `http://127.0.0.1:${node.monitorPort}`])),
    kill,
    restart: async (name) => {
      const node = nodes.find((candidate) => candidate.name === name);
      if (node === undefined) throw new Error(`no node ${name}`);
      await kill(name);
      const child = await spawnNats(bin, argsOf(node));
      if (child === undefined) throw new Error(`could not restart ${name}`);
      children.set(name, child);
    },
    stop: stopAll,
  };
}

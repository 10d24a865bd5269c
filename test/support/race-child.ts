/**
 * What every racing child process shares: its Redis from the command line, and the start line.
 * A child connects, warms up, then {@link readyThenGo}: prints `ready` and waits for the parent's
 * `go` on stdin, so every child starts its burst at once.
 */
import { createInterface } from 'node:readline';
import { Cluster, Redis } from 'ioredis';

/** `redis://…` is a standalone Redis; `host:port,host:port,…` the seeds of a cluster. */
export function redisFromArgument(target: string): Redis | Cluster {
  if (target.startsWith('redis://')) return new Redis(target);
  return new Cluster(
    target.split(',').map((hostPort) => {
      const [host, port] = hostPort.split(':');
      return { host: host!, port: Number(port) };
    }),
  );
}

/** Prints `ready`, then resolves at the first line on stdin. */
export async function readyThenGo(): Promise<void> {
  console.log('ready');
  const input = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => input.once('line', () => resolve()));
  input.close();
}

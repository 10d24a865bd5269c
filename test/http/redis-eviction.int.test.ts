/**
 * `/readyz` and `serve` warn when Redis may evict the limiter's keys: any `maxmemory-policy` but
 * `noeviction` (limiter keys have TTLs, so `volatile-*` evicts them too). On private
 * redis-servers, whose config the test changes; the shared cluster is only read.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../delivery/delivery-support.js';
import { freePort } from '../support/net.js';
import { type PrivateRedis, privateRedisBin, startPrivateRedis } from '../support/private-redis.js';
import { describeWith, servers } from '../support/servers.js';
import { startApp } from './support.js';

const readyz = async (env: Record<string, string>) => {
  const app = await startApp(env);
  try {
    const ready = await app.app.inject({ method: 'GET', url: '/readyz' });
    return {
      status: ready.statusCode,
      body: ready.json() as { status: string; checks: Record<string, { ok: boolean; warning?: string }> },
    };
  } finally {
    await app.close();
  }
};

describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'Redis eviction policy: /readyz and serve warn', () => {
  let redis: PrivateRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('warns for an evicting policy, volatile ones included, and stays ready; says nothing for noeviction', async () => {
    for (const policy of ['allkeys-lru', 'volatile-ttl']) {
      await client.config('SET', 'maxmemory-policy', policy);
      const { status, body } = await readyz({ SLUICE_REDIS_URL: redis.url });
      expect(status).toBe(200);
      expect(body.status).toBe('ready');
      expect(body.checks.redis?.ok).toBe(true);
      expect(body.checks.redis?.warning).toMatch(new RegExp(`maxmemory-policy ${policy}: .*set noeviction`));
    }
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    const { status, body } = await readyz({ SLUICE_REDIS_URL: redis.url });
    expect(status).toBe(200);
    expect(body.checks.redis).toEqual({ ok: true, detail: 'reachable' });
  });

  it('serve logs the warning at start', async () => {
    await client.config('SET', 'maxmemory-policy', 'allkeys-lfu');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-eviction-'));
    const port = await freePort();
    const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
    const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
    const child = spawn(process.execPath, ['--import', tsx, cli, 'serve', '--roles', 'api'], {
      env: {
        ...process.env,
        SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
        SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
        SLUICE_REDIS_URL: redis.url,
        SLUICE_REDIS_KEY_PREFIX: `eviction-${Date.now()}:`,
        SLUICE_PORT: String(port),
        SLUICE_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      expect(await waitFor(() => output.includes('sluice is serving'), 20_000), output).toBe(true);
      const line = output.split('\n').find((text) => text.includes('maxmemory-policy allkeys-lfu'));
      expect(line, output).toBeDefined();
      expect(JSON.parse(line!).level).toBe(40); // warn
    } finally {
      child.kill('SIGTERM');
      await client.config('SET', 'maxmemory-policy', 'noeviction');
    }
  }, 30_000);
});

describeWith(privateRedisBin, 'SLUICE_TEST_REDIS_BIN', 'Redis eviction policy: CONFIG disabled (managed Redis)', () => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await startPrivateRedis(privateRedisBin, ['--rename-command', 'CONFIG', '']);
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('says the policy is unknown, and the instance is ready', async () => {
    const { status, body } = await readyz({ SLUICE_REDIS_URL: redis.url });
    expect(status).toBe(200);
    expect(body.checks.redis?.ok).toBe(true);
    expect(body.checks.redis?.warning).toMatch(/^maxmemory-policy unknown \(CONFIG GET refused or timed out\)/);
  });
});

describeWith(servers.redisCluster, 'SLUICE_TEST_REDIS_CLUSTER', 'Redis eviction policy on a cluster', () => {
  it("reads every master's policy (the shared cluster's config is only read)", async () => {
    const nodes = servers.redisCluster!.map(({ host, port }) => `${host}:${port}`).join(',');
    const policies = await Promise.all(
      servers.redisCluster!.map(async ({ host, port }) => {
        const node = new Redis({ host, port });
        try {
          return ((await node.config('GET', 'maxmemory-policy')) as string[])[1];
        } finally {
          node.disconnect();
        }
      }),
    );
    const { status, body } = await readyz({ SLUICE_REDIS_CLUSTER_NODES: nodes, SLUICE_REDIS_KEY_PREFIX: `eviction-${Date.now()}:` });
    expect(status).toBe(200);
    const unsafe = policies.filter((policy) => policy !== 'noeviction');
    if (unsafe.length === 0) expect(body.checks.redis?.warning).toBeUndefined();
    else expect(body.checks.redis?.warning).toContain(`on ${unsafe.length} of ${policies.length} masters`);
  });
});

/** `sluice messages find`, `sluice rules preview` and `sluice ban show|lift`: the admin lookups from a shell, run in process. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRepositories, openDatabase } from '../../src/storage/index.js';
import { sluice as runSluice } from '../support/cli.js';
import { describeWith, servers } from '../support/servers.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-lookups-'));
const dbUrl = `sqlite:${join(dir, 'db.sqlite')}`;
const env: Record<string, string> = {
  SLUICE_DB_URL: dbUrl,
  SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
  SLUICE_LOG_LEVEL: 'silent',
};
const attempt = (args: string[], extraEnv: Record<string, string> = {}) => runSluice(args, { ...env, ...extraEnv });
const sluice = async (args: string[], extraEnv: Record<string, string> = {}) => {
  const result = await attempt(args, extraEnv);
  if (result.code !== 0) throw new Error(`sluice ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
};

describe('sluice lookups', () => {
  it('finds messages by recipient page by page, dry-runs rules, and refuses a ban lookup without Redis', async () => {
    await attempt(['migrate']);
    const tenant = (await sluice(['tenant', 'create', 'lookups'])) as { id: string };
    const other = (await sluice(['tenant', 'create', 'others'])) as { id: string };
    const database = await openDatabase(dbUrl);
    const repos = createRepositories(database);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const inserted = await repos.messages.insert({
          tenantId: tenant.id,
          channel: 'sms',
          recipient: '+8613800138000',
          payload: { body: `n${i}` },
          now: 1_700_000_000_000 + i,
        });
        ids.push(inserted.id);
      }
      await repos.messages.insert({ tenantId: other.id, channel: 'sms', recipient: '+8613800138000', payload: { body: 'x' }, now: 1 });
    } finally {
      await repos.close();
    }

    const first = await sluice(['messages', 'find', tenant.id, '+86 138 0013 8000', '--channel', 'sms', '--limit', '2']);
    expect(first.messages.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[1]]);
    const rest = await sluice(['messages', 'find', tenant.id, '+8613800138000', '--limit', '2', '--cursor', first.nextCursor]);
    expect(rest).toEqual({ messages: [expect.objectContaining({ id: ids[0] })] });
    const bad = await attempt(['messages', 'find', tenant.id, '+8613800138000', '--status', 'lost']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('"lost" is not a status');

    const dryRun = await sluice(['rules', 'preview', tenant.id, 'sms', '0', '1', '2', '3', '60000', '--rule', '60:3:600']);
    expect(dryRun.results.map((result: { code?: string }) => result.code ?? 'OK')).toEqual(['OK', 'OK', 'OK', 'RATE_LIMITED', 'BANNED']);
    expect(dryRun.results[4].retryAfterMs).toBe(540_003);
    const unordered = await attempt(['rules', 'preview', tenant.id, 'sms', '5', '4', '--rule', '60:3']);
    expect(unordered.code).toBe(1);
    expect(unordered.stderr).toContain('INVALID_REQUEST: sends[1].atMs');

    const embedded = await attempt(['ban', 'show', tenant.id, 'sms', '+8613800138000']);
    expect(embedded.code).toBe(1);
    expect(embedded.stderr).toContain('without SLUICE_REDIS_URL bans and counts live in the serving process');
  }, 60_000);
});

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', 'sluice ban on Redis', () => {
  it('ban show and lift', async () => {
    const redis = { SLUICE_REDIS_URL: servers.redisUrl!, SLUICE_REDIS_KEY_PREFIX: `clilookups${process.pid}:` };
    await attempt(['migrate']);
    const tenant = (await sluice(['tenant', 'create', 'banned-ones'])) as { id: string };
    await sluice(['rules', 'set', tenant.id, 'sms', '60:3:600']);
    expect(await sluice(['ban', 'show', tenant.id, 'sms', '13800138000'], redis)).toMatchObject({
      recipient: '+8613800138000',
      banned: false,
      allowed: true,
      rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600, count: 0 }],
    });
    expect(await sluice(['ban', 'lift', tenant.id, 'sms', '13800138000'], redis)).toEqual({ lifted: false });
  }, 60_000);
});

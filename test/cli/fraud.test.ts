/** `sluice fraud set|show` and `sluice prices set|show`: a tenant's SMS pumping protection from a shell, run in process. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sluice as runSluice } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-fraud-'));
const env: Record<string, string> = {
  SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
  SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
  SLUICE_LOG_LEVEL: 'silent',
};
const attempt = (args: string[]) => runSluice(args, env);
const sluice = async (...args: string[]) => {
  const result = await attempt(args);
  if (result.code !== 0) throw new Error(`sluice ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
};

describe('sluice fraud and prices', () => {
  it('set and show the SMS prices and a policy, checked as the admin API checks them', async () => {
    await attempt(['migrate']);
    const tenant = (await sluice('tenant', 'create', 'fraud')) as { id: string };

    expect(await sluice('prices', 'set', 'USD', '0.05', '--country', 'GB=0.04', '--country', 'US=0.0079')).toEqual({
      currency: 'USD',
      default: 0.05,
      countries: { GB: 0.04, US: 0.0079 },
    });
    expect(await sluice('prices', 'show')).toEqual({ currency: 'USD', default: 0.05, countries: { GB: 0.04, US: 0.0079 } });
    const badPrice = await attempt(['prices', 'set', 'USD', '0.05', '--country', 'GB']);
    expect(badPrice.code).toBe(1);
    expect(badPrice.stderr).toContain('--country takes COUNTRY=PRICE');
    const badCountry = await attempt(['prices', 'set', 'USD', '0.05', '--country', 'ZZ=1']);
    expect(badCountry.code).toBe(1);
    expect(badCountry.stderr).toContain('INVALID_REQUEST');

    const policy = {
      countries: { allow: ['US', 'GB', 'CN'] },
      prefixes: [{ digits: 8, windowSeconds: 3600, limit: 30 }],
      monthlySpend: { limit: 200, currency: 'USD' },
    };
    const stored = { mode: 'monitor', ...policy, countries: { allow: ['CN', 'GB', 'US'] } };
    expect(await sluice('fraud', 'set', tenant.id, JSON.stringify(policy))).toEqual(stored);
    expect(await sluice('fraud', 'show', tenant.id)).toEqual(stored);
    // What show prints, set takes back from a file.
    const file = join(dir, 'policy.json');
    writeFileSync(file, JSON.stringify({ ...stored, mode: 'enforce' }));
    expect((await sluice('fraud', 'set', tenant.id, `@${file}`)).mode).toBe('enforce');

    const unknown = await attempt(['fraud', 'set', tenant.id, '{"countries":{"allow":["ZZ"]}}']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('INVALID_REQUEST');
    const oversize = await attempt(['fraud', 'set', tenant.id, JSON.stringify({ prefixes: Array(9).fill(policy.prefixes[0]) })]);
    expect(oversize.code).toBe(1);
    expect(oversize.stderr).toContain('INVALID_REQUEST');
    const notJson = await attempt(['fraud', 'set', tenant.id, '{mode']);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('the policy is');
    const none = await attempt(['fraud', 'show', 'unknown']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('NOT_FOUND');
  }, 120_000);
});

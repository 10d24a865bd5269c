/**
 * CPU per accepted send of the message service in process (no HTTP), by SMS pumping protection
 * rule: a tenant per policy (none, each rule alone, all four, none again last as a control), their
 * sends alternated in rounds of N (100 at once), the median of each. The breakdown behind the
 * `fraud` benchmark's rows, and its profile:
 * `N=3000 ROUNDS=7 [REDIS=redis://…] node [--cpu-prof] --import tsx bench/support/fraud-rules-cpu.ts`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../../src/main/runtime.js';
import { loadSettings } from '../../src/settings/settings.js';
import { pool } from './sends.js';

const N = Number(process.env.N ?? 3000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const dir = mkdtempSync(join(tmpdir(), 'sluice-fraud-rules-'));
const runtime = await createRuntime(
  loadSettings({
    SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_LOG_LEVEL: 'silent',
    ...(process.env.REDIS ? { SLUICE_REDIS_URL: process.env.REDIS } : {}),
  }),
);
const services = runtime.services;
const SEED_RULES = [
  { windowSeconds: 60, limit: 3, banSeconds: 600 },
  { windowSeconds: 3600, limit: 10, banSeconds: 600 },
  { windowSeconds: 86_400, limit: 50, banSeconds: 600 },
];
const RULES = {
  countries: { allow: ['CN', 'GB', 'US'] },
  prefixes: [{ digits: 8, windowSeconds: 3600, limit: 1000 }],
  conversion: { windowSeconds: 3600, minSends: 1_000_000, minRate: 0.1, by: 'country' },
  monthlySpend: { limit: 1_000_000_000, currency: 'USD' },
};
const POLICIES: [string, object | undefined][] = [
  ['none', undefined],
  ['countries', { mode: 'enforce', countries: RULES.countries }],
  ['prefixes', { mode: 'enforce', prefixes: RULES.prefixes }],
  ['conversion', { mode: 'enforce', conversion: RULES.conversion }],
  ['monthlySpend', { mode: 'enforce', monthlySpend: RULES.monthlySpend }],
  ['all four', { mode: 'enforce', ...RULES }],
  ['none (control, last)', undefined],
];

await services.fraud.setPrices({ currency: 'USD', default: 0.05 });
const keys: string[] = [];
for (const [label, policy] of POLICIES) {
  const tenant = await services.tenants.createTenant(`rules-${label.replace(/\W+/g, '-')}`);
  await services.rules.setRules(tenant.id, 'sms', SEED_RULES);
  if (policy) await services.fraud.setPolicy(tenant.id, policy as Parameters<typeof services.fraud.setPolicy>[1]);
  keys.push(tenant.apiKey);
}

let counter = 0;
/** A new CN mobile each time, consecutive ones in different 8-digit prefixes. */
const nextNumber = () => {
  counter++;
  return `+86${130 + (counter % 10)}${String((counter * 7919) % 100_000_000).padStart(8, '0')}`;
};
const cpuPerSend = async (apiKey: string) => {
  const start = process.cpuUsage();
  await pool(N, 100, () => services.messages.send(apiKey, { channel: 'sms', to: nextNumber(), body: 'Your code is 1234' }));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / N;
};

for (const key of keys) await cpuPerSend(key);
const samples: number[][] = POLICIES.map(() => []);
for (let round = 0; round < ROUNDS; round++) for (const [index, key] of keys.entries()) samples[index]!.push(await cpuPerSend(key));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const none = median(samples[0]!);
console.log('| policy | CPU µs per send (median) | over none |\n| --- | ---: | ---: |');
for (const [index, [label]] of POLICIES.entries()) {
  const value = median(samples[index]!);
  console.log(
    `| ${label} | ${value.toFixed(1)} | ${index === 0 ? '' : `${(value - none).toFixed(1)} µs (${(((value - none) / none) * 100).toFixed(0)} %)`} |`,
  );
}
await runtime.close();

/**
 * What SMS pumping protection costs on the accept path: `POST /v1/messages` under autocannon (as
 * bench/service.ts), the server's CPU per accepted send read from /proc, for a tenant without a
 * fraud policy, one whose policy has every rule on in enforce mode (a country list, a prefix
 * velocity, a conversion rule by country, a monthly spend cap) and passes every send, and one
 * whose country is past the conversion rule's `minSends`, as a busy sender's is. One server per
 * backend (embedded; Redis + SQLite), the tenants' loads alternated on it, so JIT, database size
 * and the machine's other load fall on all alike. Numbers spread over ~10,000 8-digit prefixes, as
 * ordinary traffic does; the seed's three rules on every tenant.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { ADMIN, CONNECTIONS, cli, startServer } from './service.js';
import type { Benchmark } from './support/benchmark.js';
import { startPrivateRedis } from './support/redis-server.js';
import { formatCount, markdownTable } from './support/table.js';

const ROUNDS = Number(process.env.BENCH_FRAUD_ROUNDS ?? 3);

/** Every rule on, thresholds no ordinary send meets: each send is judged by all four and passes. */
const POLICY = {
  mode: 'enforce',
  countries: { allow: ['CN', 'GB', 'US'] },
  prefixes: [{ digits: 8, windowSeconds: 3600, limit: 1000 }],
  conversion: { windowSeconds: 3600, minSends: 1_000_000, minRate: 0.1, by: 'country' },
  monthlySpend: { limit: 1_000_000_000, currency: 'USD' },
};

/**
 * The same with the country past `minSends`, as a busy sender's is: each send's conversion check
 * is refused at `minSends`, its confirmations are read, and it is checked again at the limit they
 * allow (`minRate` 0: no limit), two more limiter calls.
 */
const BUSY_POLICY = { ...POLICY, conversion: { windowSeconds: 3600, minSends: 20, minRate: 0, by: 'country' } };

const POLICIES = [
  { label: 'none', policy: undefined },
  { label: 'every rule, enforce', policy: POLICY },
  { label: 'every rule, country past minSends', policy: BUSY_POLICY },
] as const;

/** User + system CPU of a process so far, in microseconds (Linux: /proc/<pid>/stat, clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // After the command: state is field 3, utime 14 and stime 15 (1-based), so indexes 11 and 12 here.
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

let tenants = 0;
async function tenant(base: string, policy: object | undefined): Promise<string> {
  const headers = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
  const call = (method: string, path: string, body: unknown) => fetch(`${base}${path}`, { method, headers, body: JSON.stringify(body) });
  const created = (await (await call('POST', '/v1/admin/tenants', { name: `bench-fraud-${Date.now()}-${tenants++}` })).json()) as {
    id: string;
    apiKey: string;
  };
  const rules = [
    { windowSeconds: 60, limit: 3, banSeconds: 600 },
    { windowSeconds: 3600, limit: 10, banSeconds: 600 },
    { windowSeconds: 86_400, limit: 50, banSeconds: 600 },
  ];
  await call('PUT', `/v1/admin/tenants/${created.id}/rules/sms`, { rules });
  if (policy) {
    const answer = await call('PUT', `/v1/admin/tenants/${created.id}/fraud/sms`, policy);
    if (!answer.ok) throw new Error(`policy refused: ${await answer.text()}`);
  }
  return created.apiKey;
}

let counter = 0;
/** A new valid CN mobile each time, consecutive ones in different 8-digit prefixes (a bijection of the counter). */
const nextNumber = () => {
  counter++;
  return `+86${130 + (counter % 10)}${String((counter * 7919) % 100_000_000).padStart(8, '0')}`;
};

async function round(base: string, pid: number, apiKey: string, seconds: number) {
  const before = cpuMicros(pid);
  const result = await autocannon({
    url: `${base}/v1/messages`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ channel: 'sms', to: nextNumber(), body: 'Your code is 1234' }) }),
      },
    ],
  });
  const cpu = cpuMicros(pid) - before;
  return { accepted: result['2xx'], non2xx: result.non2xx, cpu };
}

type Run = { accepted: number; cpu: number; non2xx: number };

interface Row {
  backend: string;
  /** One list of runs per entry of POLICIES. */
  runs: Run[][];
}

const perSend = (runs: Run[]) => runs.reduce((sum, run) => sum + run.cpu, 0) / runs.reduce((sum, run) => sum + run.accepted, 0);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export const benchmark: Benchmark = {
  name: 'fraud',
  title: 'SMS pumping protection: its cost on the accept path',
  async run(context) {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-fraud-'));
    const common = { SLUICE_ROLES: 'api', SLUICE_ADMIN_TOKEN: ADMIN, SLUICE_LOG_LEVEL: 'warn' };
    const redis = await startPrivateRedis();
    const rows: Row[] = [];
    try {
      for (const backend of ['embedded (SQLite)', 'Redis + SQLite']) {
        context.progress(`fraud: ${backend}`);
        const server = await startServer(cli, ['serve'], {
          ...common,
          SLUICE_DB_URL: `sqlite:${join(dir, `${rows.length}.db`)}`,
          SLUICE_SECRET_KEY_FILE: join(dir, `k${rows.length}`),
          ...(backend.startsWith('Redis') ? { SLUICE_REDIS_URL: redis.url } : {}),
        });
        try {
          const headers = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
          await fetch(`${server.base}/v1/admin/prices/sms`, {
            method: 'PUT',
            headers,
            body: JSON.stringify({ currency: 'USD', default: 0.05 }),
          });
          const keys: string[] = [];
          for (const { policy } of POLICIES) keys.push(await tenant(server.base, policy));
          const row: Row = { backend, runs: POLICIES.map(() => []) };
          // A short warm-up of each, then the measured rounds, alternated.
          for (const key of keys) await round(server.base, server.child.pid!, key, 2);
          for (let i = 0; i < ROUNDS; i++) {
            context.progress(`fraud: ${backend}, round ${i + 1} of ${ROUNDS}`);
            for (const [index, key] of keys.entries())
              row.runs[index]!.push(await round(server.base, server.child.pid!, key, context.seconds));
          }
          rows.push(row);
        } finally {
          server.child.kill('SIGKILL');
        }
      }
    } finally {
      await redis.stop();
    }
    const table = markdownTable(
      [
        { header: 'backend' },
        { header: 'policy' },
        { header: 'accepted/s (median)', align: 'right' },
        { header: 'server CPU µs per accepted send', align: 'right' },
        { header: 'non-2xx', align: 'right' },
        { header: "protection's share", align: 'right' },
      ],
      rows.flatMap((row) => {
        const off = perSend(row.runs[0]!);
        const rate = (runs: Run[]) => formatCount(median(runs.map((run) => run.accepted / context.seconds)));
        const non2xx = (runs: Run[]) => String(runs.reduce((sum, run) => sum + run.non2xx, 0));
        return POLICIES.map(({ label }, index) => {
          const runs = row.runs[index]!;
          const cpu = perSend(runs);
          const share = index === 0 ? '' : `${(((cpu - off) / off) * 100).toFixed(1)} %`;
          return [row.backend, label, rate(runs), cpu.toFixed(0), non2xx(runs), share];
        });
      }),
    );
    return `autocannon, ${CONNECTIONS} connections, ${context.seconds} s per round, ${ROUNDS} rounds per policy (one tenant each) alternated on one server per backend (API role), after a 2 s warm-up of each; server CPU (user + system, /proc) summed over the rounds ÷ accepted sends. Policies: ${JSON.stringify(POLICY)}; past minSends, its conversion ${JSON.stringify(BUSY_POLICY.conversion)}; prices 0.05 USD.\n\n${table}\n\nTarget: the protection's share ≤ 10 % of the accept path's CPU.`;
  },
};

/**
 * The risk benchmark: the worked OTP rule set (docs/risk.md: 5 rules over 3 dimensions) judged by
 * sluice's RiskEngine on one private Redis, beside the same rules done the obvious way from the
 * client in the same run: rate-limiter-flexible for the two windows, PFCOUNT/PFADD for the phones
 * per device (HyperLogLog per device and hour), BITFIELD GET/SET for the new-device filter (the
 * same k bit positions, one command per read and per write rather than k GETBITs, to be fair to
 * it) and LRANGE for the last 5 verifications. The obvious client sends each rule's commands
 * concurrently (Promise.all), so its latency is one rule's, not five.
 *
 * Load: 10,000 phones, 3,000 devices, 10,000 users picked at random; 200 checks in flight; each
 * row on an empty server (FLUSHALL) for `BENCH_SECONDS`. Then Redis memory per subject per kind.
 *
 * `RISK_RULES=new-device,phones-per-device` judges only those rules of the set (the sluice row
 * alone, no obvious row): what each rule costs Redis per check (docs/benchmarks.md).
 * `RISK_ONE_CALL=false` judges with window rules in the limiter (`SLUICE_RISK_ONE_CALL` off).
 */
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ValueHasher } from '../src/limiter/events/hashing.js';
import {
  bloomSize,
  directEvents,
  Limiter,
  normalizeRiskRules,
  RedisEventStore,
  RedisStore,
  RiskEngine,
  ruleSubject,
} from '../src/limiter/index.js';
import type { BenchContext, Benchmark } from './support/benchmark.js';
import { type CpuUsage, startCpuMeter } from './support/cpu.js';
import { type Attempt, closedLoop, type LoadResult } from './support/load.js';
import { startPrivateRedis } from './support/redis-server.js';
import { formatBytes, formatCount, formatMs, formatRatio, markdownTable } from './support/table.js';

const IN_FLIGHT = 200;
const pick = (n: number, prefix: string) => `${prefix}${Math.floor(Math.random() * n)}`;
const event = () => ({ phone: pick(10_000, '+86138'), device: pick(3_000, 'dev-'), user: pick(10_000, 'user-') });

const OTP_RULES = normalizeRiskRules([
  { name: 'codes-per-phone', kind: 'window', key: ['phone'], windowMs: 300_000, limit: 3 },
  { name: 'codes-per-device', kind: 'window', key: ['device'], windowMs: 3_600_000, limit: 10 },
  { name: 'phones-per-device', kind: 'distinct', key: ['device'], of: 'phone', windowMs: 3_600_000, limit: 3 },
  { name: 'new-device', kind: 'seen', key: ['user'], of: 'device', effect: 'review' },
  { name: 'failed-verifications', kind: 'last-n', key: ['user'], n: 5, m: 3, outcome: 'failed' },
]);
const SCOPE = 'risk:bench:r:3:otp:';
const ONE_CALL = process.env.RISK_ONE_CALL !== 'false';
const ONLY = process.env.RISK_RULES?.split(',').filter((name) => name.length > 0);
const JUDGED = ONLY ? OTP_RULES.filter((rule) => ONLY.includes(rule.name)) : OTP_RULES;

interface Instance {
  attempt: Attempt;
  close(): Promise<void>;
}

function sluice(url: string): Instance {
  const client = new Redis(url);
  const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'bench:limiter' }) });
  const engine = new RiskEngine({
    windows: limiter,
    peek: limiter,
    events: directEvents(new RedisEventStore({ client, prefix: 'bench:risk' })),
    oneCall: ONE_CALL,
  });
  return {
    attempt: () => engine.check(SCOPE, JUDGED, event()).then((decision) => decision.allowed),
    close: async () => {
      await client.quit();
    },
  };
}

const consumed = (promise: Promise<unknown>) =>
  promise.then(
    () => true,
    (reason: unknown) => {
      if (reason instanceof RateLimiterRes) return false;
      throw reason;
    },
  );

function obvious(url: string): Instance {
  const client = new Redis(url);
  const perPhone = new RateLimiterRedis({ storeClient: client, keyPrefix: 'bench:o:phone', points: 3, duration: 300 });
  const perDevice = new RateLimiterRedis({ storeClient: client, keyPrefix: 'bench:o:device', points: 10, duration: 3600 });
  const hasher = new ValueHasher();
  // A standard Bloom filter (k positions over the whole bitmap), as the obvious client keeps one.
  const bits = Math.ceil((-1000 * Math.log(0.001)) / Math.LN2 ** 2);
  const hashes = Math.round((bits / 1000) * Math.LN2);
  const standardPositions = (value: string): number[] => {
    const digest = hasher.digest('b', value);
    const h1 = digest.readUInt32BE(0);
    const h2 = digest.readUInt32BE(4) | 1;
    return Array.from({ length: hashes }, (_, i) => (h1 + i * (h2 % bits)) % bits);
  };
  const attempt = async () => {
    const { phone, device, user } = event();
    const hour = Math.floor(Date.now() / 3_600_000);
    const hll = `bench:o:phones:${device}:${hour}`;
    const filter = `bench:o:seen:${user}`;
    const positions = standardPositions(device);
    const [phoneOk, deviceOk, distinctOk, , lastN] = await Promise.all([
      consumed(perPhone.consume(phone)),
      consumed(perDevice.consume(device)),
      client.pfcount(hll).then(async (count) => {
        const added = await client.pfadd(hll, phone);
        if (added === 1 && count >= 3) return false;
        await client.pexpire(hll, 3_600_000);
        return true;
      }),
      client.call('BITFIELD', filter, ...positions.flatMap((p) => ['GET', 'u1', String(p)])).then(async (got) => {
        const seen = (got as number[]).every((bit) => bit === 1);
        if (!seen) await client.call('BITFIELD', filter, ...positions.flatMap((p) => ['SET', 'u1', String(p), '1']));
        return seen;
      }),
      client.lrange(`bench:o:last:${user}`, 0, 4),
    ]);
    const failures = lastN.filter((outcome) => outcome === 'failed').length;
    return phoneOk && deviceOk && distinctOk && failures < 3;
  };
  return { attempt, close: async () => void (await client.quit()) };
}

interface Row {
  name: string;
  result: LoadResult;
  cpu: CpuUsage;
}

async function measure(url: string, admin: Redis, name: string, create: (url: string) => Instance, context: BenchContext): Promise<Row> {
  await admin.flushall();
  const instance = create(url);
  await closedLoop(instance.attempt, { inFlight: IN_FLIGHT, durationMs: 1000 });
  const stop = await startCpuMeter(admin);
  const result = await closedLoop(instance.attempt, { inFlight: IN_FLIGHT, durationMs: context.seconds * 1000 });
  const cpu = await stop();
  await instance.close();
  if (result.failures > 0) throw new Error(`${name}: ${result.failures} failures, first: ${String(result.firstFailure)}`);
  context.progress(`${name}: ${formatCount(Math.round((result.decisions / result.elapsedMs) * 1000))} checks/s`);
  return { name, result, cpu };
}

async function memoryPerKind(url: string, admin: Redis): Promise<string> {
  await admin.flushall();
  const client = new Redis(url);
  const store = new RedisEventStore({ client, prefix: 'bench:mem' });
  const limiter = new Limiter({ store: new RedisStore({ client, prefix: 'bench:memlim' }) });
  const dims = { phone: '+8613800000000', device: 'dev-0', user: 'user-0' };
  const subject = (name: string) => ruleSubject(SCOPE, OTP_RULES.find((rule) => rule.name === name)!, dims);
  for (let i = 0; i < 3; i++) await limiter.check({ subject: subject('codes-per-phone'), rules: [{ windowMs: 300_000, limit: 3 }] });
  for (let i = 0; i < 3; i++) {
    await store.decide!({
      ops: [{ kind: 'window', subject: subject('codes-per-device'), windowMs: 3_600_000, limit: 10, record: true }],
      vetoes: [true],
    });
  }
  for (let i = 0; i < 5; i++)
    await store.apply([{ kind: 'last-n', subject: subject('failed-verifications'), n: 5, m: 3, outcome: 'failed', push: 'failed' }]);
  for (let i = 0; i < 3; i++) {
    await store.apply([
      { kind: 'distinct', subject: subject('phones-per-device'), windowMs: 3_600_000, limit: 3, value: `+86139${i}`, record: true },
    ]);
  }
  const { bits, hashes } = bloomSize(1000, 0.001);
  await store.apply([{ kind: 'seen', subject: subject('new-device'), bits, hashes, value: 'dev-0', record: true }]);
  const rows: string[][] = [];
  for (const key of await admin.keys('*')) {
    const bytes = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const kind =
      key.endsWith(':log') || key.endsWith(':plg')
        ? 'window in the limiter (SLUICE_RISK_ONE_CALL=false; 3 entries)'
        : key.endsWith(':w')
          ? 'window in one call (3 entries)'
          : key.endsWith(':n')
            ? 'last-n (n = 5, full)'
            : key.endsWith(':d')
              ? 'distinct (3 values)'
              : key.includes(':b:')
                ? 'seen (capacity 1000, p = 0.001)'
                : `other (${key.split(':').pop()})`;
    rows.push([kind, formatBytes(bytes)]);
  }
  await client.quit();
  rows.sort((a, b) => a[0]!.localeCompare(b[0]!));
  return markdownTable([{ header: 'state of one subject' }, { header: 'Redis MEMORY USAGE', align: 'right' }], rows);
}

export const benchmark: Benchmark = {
  name: 'risk',
  title: 'Risk control: the OTP rule set on one Redis',
  async run(context) {
    const server = await startPrivateRedis();
    const admin = new Redis(server.url);
    try {
      const label = ONLY
        ? `sluice RiskEngine, only ${JUDGED.map((rule) => rule.name).join(', ')}`
        : ONE_CALL
          ? 'sluice RiskEngine (one risk-batch call per check batch)'
          : 'sluice RiskEngine (RISK_ONE_CALL=false: check-batch + risk-batch, undos)';
      const rows = [await measure(server.url, admin, label, sluice, context)];
      if (!ONLY)
        rows.push(await measure(server.url, admin, 'obvious: rate-limiter-flexible + PFCOUNT/PFADD + BITFIELD + LRANGE', obvious, context));
      const rate = (row: Row) => (row.result.decisions / row.result.elapsedMs) * 1000;
      const cpuPerCheck = (row: Row) => (row.cpu.redisMicros ?? Number.NaN) / row.result.decisions;
      const peer = rows[1] ?? rows[0]!;
      const table = markdownTable(
        [
          { header: 'contender' },
          { header: 'checks/s', align: 'right' },
          { header: 'p99', align: 'right' },
          { header: 'Redis CPU µs/check', align: 'right' },
          { header: 'denied', align: 'right' },
          { header: 'vs obvious (checks/s)', align: 'right' },
          { header: 'vs obvious (Redis CPU)', align: 'right' },
        ],
        rows.map((row) => [
          row.name,
          formatCount(Math.round(rate(row))),
          formatMs(row.result.latency?.quantile(0.99)),
          cpuPerCheck(row).toFixed(1),
          `${((row.result.denied / row.result.decisions) * 100).toFixed(0)} %`,
          formatRatio(rate(row), rate(peer), ''),
          formatRatio(cpuPerCheck(row), cpuPerCheck(peer), ''),
        ]),
      );
      const memory = await memoryPerKind(server.url, admin);
      return `${IN_FLIGHT} checks in flight, 10,000 phones, 3,000 devices, 10,000 users at random.\n\n${table}\n\nMemory per subject, by kind:\n\n${memory}`;
    } finally {
      admin.disconnect();
      await server.stop();
    }
  },
};

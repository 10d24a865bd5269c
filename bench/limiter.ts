/**
 * The limiter benchmark: sluice's RedisStore and MemoryStore against rate-limiter-flexible and
 * rolling-rate-limiter, under one harness, on one private Redis.
 *
 * Load: 10,000 subjects picked uniformly at random, a closed loop with 200 decisions in flight
 * (in-process stores also get a sequential loop: one decision awaited at a time). Each row warms
 * up, then is measured for `BENCH_SECONDS` (default 10). Every Redis-backed row gets a fresh
 * ioredis client, its own key prefix and an empty server (FLUSHALL before it).
 *
 * Two rule sets, because what a decision costs depends on its outcome:
 * - strict, the rule set of a recipient: 1 min 3 (ban 10 min), 1 h 10, 1 day 50. With 10,000
 *   subjects and hundreds of thousands of decisions most are denials (RATE_LIMITED, BANNED), as
 *   they would be for a recipient under attack;
 * - large: the same windows with limits of 1e6, so every decision admits and writes.
 * Peers have one rule (rate-limiter-flexible counts a fixed window, rolling-rate-limiter keeps a
 * sliding log): 1 min 3, resp. 1 min 1e6.
 *
 * Then Redis memory per subject: sluice's log of 50 entries against the same sorted set with
 * UUID members (what rolling-rate-limiter writes, and the obvious way to write a log).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RedisRateLimiter } from 'rolling-rate-limiter';
import { Limiter, MemoryStore, RedisStore, type Rule } from '../src/limiter/index.js';
import type { BenchContext, Benchmark } from './support/benchmark.js';
import { type CpuUsage, startCpuMeter } from './support/cpu.js';
import { type Attempt, closedLoop, type LoadResult, sequentialLoop } from './support/load.js';
import { infoField } from './support/machine.js';
import { startPrivateRedis } from './support/redis-server.js';
import { type Column, formatBytes, formatCount, formatMs, formatPercent, formatRatio, markdownTable } from './support/table.js';

const SUBJECT_COUNT = 10_000;
const IN_FLIGHT = 200;
const LOG_ENTRIES = 50;

/** Subjects shaped like the service's (`tenant:channel:recipient`). */
const subjects = Array.from({ length: SUBJECT_COUNT }, (_, index) => `bench:sms:+86138${String(index).padStart(8, '0')}`);
const randomSubject = (): string => subjects[Math.floor(Math.random() * SUBJECT_COUNT)]!;

const STRICT_RULES: readonly Rule[] = [
  { windowMs: 60_000, limit: 3, banMs: 600_000 },
  { windowMs: 3_600_000, limit: 10 },
  { windowMs: 86_400_000, limit: 50 },
];
const LARGE_RULES: readonly Rule[] = [
  { windowMs: 60_000, limit: 1_000_000, banMs: 600_000 },
  { windowMs: 3_600_000, limit: 1_000_000 },
  { windowMs: 86_400_000, limit: 1_000_000 },
];

type Limits = 'strict' | 'large';
const LIMITS: readonly Limits[] = ['strict', 'large'];
const peerPoints = (limits: Limits): number => (limits === 'strict' ? 3 : 1_000_000);
const sluiceRules = (limits: Limits): readonly Rule[] => (limits === 'strict' ? STRICT_RULES : LARGE_RULES);

interface Instance {
  attempt: Attempt;
  close(): Promise<void>;
}

/** One limiter under test, built fresh for its row. */
interface Contender {
  name: string;
  limits: Limits;
  /** What it counts, for the table. */
  rules: string;
  /** A row that measures the harness alone: no ratio. */
  baseline?: boolean;
  create(): Instance | Promise<Instance>;
}

interface Row {
  contender: Contender;
  loop: 'closed' | 'sequential';
  result: LoadResult;
  cpu: CpuUsage;
}

/** rate-limiter-flexible rejects with a RateLimiterRes on denial and with an Error on failure. */
function consumeOutcome(consume: Promise<unknown>): Promise<boolean> {
  return consume.then(
    () => true,
    (reason: unknown) => {
      if (reason instanceof RateLimiterRes) return false;
      throw reason;
    },
  );
}

function sluiceDescription(limits: Limits): string {
  return limits === 'strict' ? 'sliding-log: 1 min 3 (ban 10 min), 1 h 10, 1 day 50' : 'sliding-log: 1 min, 1 h, 1 day, each 1e6';
}

const checkAnonymous =
  (limiter: Limiter, rules: readonly Rule[]): Attempt =>
  () =>
    limiter.check({ subject: randomSubject(), rules }).then((decision) => decision.allowed);

/** Each attempt with a request id of its own, as the service passes its message ids (a counter: no UUID cost in the harness). */
function checkWithIds(limiter: Limiter, rules: readonly Rule[]): Attempt {
  let sequence = 0;
  return () => limiter.check({ subject: randomSubject(), rules, requestId: `msg-${++sequence}` }).then((decision) => decision.allowed);
}

function redisContenders(url: string): Contender[] {
  const contenders: Contender[] = [];
  for (const ids of [false, true]) {
    for (const limits of LIMITS) {
      contenders.push({
        name: ids ? 'sluice RedisStore, request ids' : 'sluice RedisStore',
        limits,
        rules: sluiceDescription(limits),
        create: () => {
          const client = new Redis(url);
          const store = new RedisStore({ client, prefix: `bench:sluice:${limits}` });
          const limiter = new Limiter({ store });
          const rules = sluiceRules(limits);
          const attempt = ids ? checkWithIds(limiter, rules) : checkAnonymous(limiter, rules);
          return {
            attempt,
            close: async () => {
              await store.close();
              await client.quit();
            },
          };
        },
      });
    }
  }
  // As the service runs it (SLUICE_BAN_CACHE_MS): a check of a subject banned in Redis is answered in process until the ban ends.
  contenders.push({
    name: 'sluice RedisStore + ban cache',
    limits: 'strict',
    rules: sluiceDescription('strict'),
    create: () => {
      const client = new Redis(url);
      const store = new RedisStore({ client, prefix: 'bench:sluice:cached' });
      const limiter = new Limiter({ store, banCache: true });
      return {
        attempt: checkAnonymous(limiter, sluiceRules('strict')),
        close: async () => {
          await store.close();
          await client.quit();
        },
      };
    },
  });
  for (const limits of LIMITS) {
    contenders.push({
      name: 'RateLimiterRedis',
      limits,
      rules: `fixed window: 1 min ${formatCount(peerPoints(limits))}`,
      create: () => {
        const client = new Redis(url);
        const limiter = new RateLimiterRedis({
          storeClient: client,
          keyPrefix: `bench:rlf:${limits}`,
          points: peerPoints(limits),
          duration: 60,
        });
        return {
          attempt: () => consumeOutcome(limiter.consume(randomSubject())),
          close: async () => {
            await client.quit();
          },
        };
      },
    });
  }
  for (const limits of LIMITS) {
    contenders.push({
      name: 'rolling-rate-limiter',
      limits,
      rules: `sliding log: 1 min ${formatCount(peerPoints(limits))}`,
      create: () => {
        const client = new Redis(url);
        const limiter = new RedisRateLimiter({
          client,
          namespace: `bench:rrl:${limits}:`,
          interval: 60_000,
          maxInInterval: peerPoints(limits),
        });
        return {
          attempt: () => limiter.limitWithInfo(randomSubject()).then((info) => !info.blocked),
          close: async () => {
            await client.quit();
          },
        };
      },
    });
  }
  return contenders;
}

function memoryContenders(): Contender[] {
  // The floor: picking a subject and settling a promise, which every in-process row also pays.
  const contenders: Contender[] = [
    {
      name: 'harness alone',
      limits: 'large',
      rules: 'no limiter (random subject, resolved promise)',
      baseline: true,
      create: () => ({ attempt: () => Promise.resolve(randomSubject().length > 0), close: async () => {} }),
    },
  ];
  for (const ids of [false, true]) {
    for (const limits of LIMITS) {
      contenders.push({
        name: ids ? 'sluice MemoryStore, request ids' : 'sluice MemoryStore',
        limits,
        rules: sluiceDescription(limits),
        create: () => {
          const store = new MemoryStore();
          const limiter = new Limiter({ store });
          const rules = sluiceRules(limits);
          return { attempt: ids ? checkWithIds(limiter, rules) : checkAnonymous(limiter, rules), close: () => store.close() };
        },
      });
    }
  }
  for (const limits of LIMITS) {
    contenders.push({
      name: 'RateLimiterMemory',
      limits,
      rules: `fixed window: 1 min ${formatCount(peerPoints(limits))}`,
      create: () => {
        const limiter = new RateLimiterMemory({ keyPrefix: `bench:rlf:${limits}`, points: peerPoints(limits), duration: 60 });
        return { attempt: () => consumeOutcome(limiter.consume(randomSubject())), close: async () => {} };
      },
    });
  }
  return contenders;
}

/** Warm-up before each measured span: JIT, connections, script loading, and subjects' state. */
const warmupMs = (context: BenchContext): number => Math.min(2_000, context.seconds * 200);

async function measure(context: BenchContext, contender: Contender, loop: Row['loop'], redisAdmin: Redis | undefined): Promise<Row> {
  const instance = await contender.create();
  try {
    const run = (durationMs: number): Promise<LoadResult> =>
      loop === 'closed'
        ? closedLoop(instance.attempt, { inFlight: IN_FLIGHT, durationMs })
        : sequentialLoop(instance.attempt, { durationMs });
    await run(warmupMs(context));
    const stopMeter = await startCpuMeter(redisAdmin);
    const result = await run(context.seconds * 1_000);
    const cpu = await stopMeter();
    const rate = (result.decisions / result.elapsedMs) * 1_000;
    context.progress(
      `${contender.name} (${contender.limits}, ${loop}): ${formatCount(rate)} decisions/s, ${result.failures} failures` +
        (result.failures ? ` (first: ${String(result.firstFailure)})` : ''),
    );
    return { contender, loop, result, cpu };
  } finally {
    await instance.close();
  }
}

const rateOf = (row: Row): number => (row.result.decisions / row.result.elapsedMs) * 1_000;

function cpuPerDecision(row: Row): string {
  const { decisions } = row.result;
  if (decisions === 0) return '—';
  const node = (row.cpu.nodeMicros / decisions).toFixed(1);
  return row.cpu.redisMicros === undefined ? node : `${node} + ${(row.cpu.redisMicros / decisions).toFixed(1)}`;
}

/** The table of one group; ratios against the `reference` contender with the same limits and loop. */
function throughputTable(rows: readonly Row[], reference: string, withLoop: boolean): string {
  const referenceRate = (row: Row): number | undefined => {
    const match = rows.find((r) => r.contender.name === reference && r.contender.limits === row.contender.limits && r.loop === row.loop);
    return match && rateOf(match);
  };
  const columns: Column[] = [
    { header: 'limiter' },
    { header: 'rules' },
    ...(withLoop ? [{ header: 'loop' }] : []),
    { header: 'decisions/s', align: 'right' },
    { header: 'admitted', align: 'right' },
    { header: 'p50 ms', align: 'right' },
    { header: 'p99 ms', align: 'right' },
    { header: 'Node CPU', align: 'right' },
    ...(withLoop ? [] : [{ header: 'Redis CPU', align: 'right' as const }]),
    { header: withLoop ? 'CPU µs/decision' : 'CPU µs/decision (Node + Redis)', align: 'right' },
    { header: 'failures', align: 'right' },
    { header: `vs ${reference}` },
  ];
  const cells = rows.map((row) => {
    const { result } = row;
    return [
      row.contender.name,
      row.contender.rules,
      ...(withLoop ? [row.loop === 'closed' ? `${IN_FLIGHT} in flight` : 'sequential'] : []),
      formatCount(rateOf(row)),
      result.decisions ? formatPercent((result.admitted / result.decisions) * 100) : '—',
      formatMs(result.latency?.quantile(0.5)),
      formatMs(result.latency?.quantile(0.99)),
      formatPercent(row.cpu.nodePercent),
      ...(withLoop ? [] : [formatPercent(row.cpu.redisPercent)]),
      cpuPerDecision(row),
      formatCount(result.failures),
      row.contender.baseline ? '—' : formatRatio(rateOf(row), referenceRate(row), reference),
    ];
  });
  return markdownTable(columns, cells);
}

async function memoryUsage(admin: Redis, key: string): Promise<{ bytes: number; encoding: string; entries: number }> {
  const bytes = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const encoding = String(await admin.call('OBJECT', 'ENCODING', key));
  const type = await admin.type(key);
  const entries = type === 'zset' ? await admin.zcard(key) : 1;
  return { bytes, encoding, entries };
}

/** Writes a 50-entry log per layout and asks Redis what each key costs. */
async function measureMemory(url: string, admin: Redis): Promise<string> {
  await admin.flushall();
  const client = new Redis(url);
  try {
    const subject = subjects[0]!;
    // sluice with its default prefix, as the service writes: 50 admitted checks with request ids
    // (as the service sends them) for one subject, 50 without for another.
    const store = new RedisStore({ client });
    const limiter = new Limiter({ store });
    const newKeys = async (write: () => Promise<unknown>): Promise<string[]> => {
      const before = new Set(await admin.keys('*'));
      await write();
      return (await admin.keys('*')).filter((key) => !before.has(key));
    };
    const [idsLog] = await newKeys(async () => {
      for (let index = 0; index < LOG_ENTRIES; index++) await limiter.check({ subject, rules: LARGE_RULES, requestId: randomUUID() });
    });
    const [idsBan] = await newKeys(() => limiter.ban(subject, 600_000));
    const [anonLog] = await newKeys(async () => {
      for (let index = 0; index < LOG_ENTRIES; index++) await limiter.check({ subject: subjects[1]!, rules: LARGE_RULES });
    });
    // The same 50 sends spread over 23 hours (explicit times): a time then takes 4 bytes, not 1.
    const [dayLog] = await newKeys(async () => {
      const start = Date.now() - 23 * 3_600_000;
      for (let index = 0; index < LOG_ENTRIES; index++) {
        await limiter.check({ subject: subjects[2]!, rules: LARGE_RULES, requestId: randomUUID(), now: start + index * 1_650_000 });
      }
    });
    // The sorted set, as releases before 2026-12-01 wrote every log (packedLogMax 0).
    const sortedStore = new RedisStore({ client, packedLogMax: 0 });
    const sorted = new Limiter({ store: sortedStore });
    const [sortedLog] = await newKeys(async () => {
      for (let index = 0; index < LOG_ENTRIES; index++)
        await sorted.check({ subject: subjects[3]!, rules: LARGE_RULES, requestId: randomUUID() });
    });
    await sortedStore.close();
    if (
      !idsLog?.endsWith(':plg') ||
      !idsBan?.endsWith(':ban') ||
      !anonLog?.endsWith(':plg') ||
      !dayLog?.endsWith(':plg') ||
      !sortedLog?.endsWith(':log')
    ) {
      throw new Error(`unexpected sluice keys: ${idsLog}, ${idsBan}, ${anonLog}, ${dayLog}, ${sortedLog}`);
    }
    await store.close();
    // The UUID log under a key name of the same length, so only members and scores differ.
    const uuidKey = `uuid${sortedLog.slice(4)}`;
    const start = Date.now();
    for (let index = 0; index < LOG_ENTRIES; index++) await admin.zadd(uuidKey, start + index, randomUUID());
    // rolling-rate-limiter's own key: UUID members, microsecond scores.
    const rolling = new RedisRateLimiter({ client, namespace: 'bench:mem:rrl:', interval: 86_400_000, maxInInterval: 1_000_000 });
    for (let index = 0; index < LOG_ENTRIES; index++) await rolling.limitWithInfo(subject);
    // rate-limiter-flexible keeps a counter, not a log: what giving up exactness saves.
    const flexible = new RateLimiterRedis({ storeClient: client, keyPrefix: 'bench:mem:rlf', points: 1_000_000, duration: 86_400 });
    for (let index = 0; index < LOG_ENTRIES; index++) await flexible.consume(subject);
    const rlfKeys = await admin.keys('bench:mem:rlf*');

    const measured: [string, string][] = [
      ['sluice packed log, request ids (written within 0.1 s)', idsLog],
      ['sluice packed log, no request ids', anonLog],
      ['sluice packed log, request ids, spread over 23 h', dayLog],
      ['sluice sorted-set log (packedLogMax 0), request ids', sortedLog],
      ['sluice ban key', idsBan],
      ['sorted set, UUID members, ms scores', uuidKey],
      ['rolling-rate-limiter log (UUID members, µs scores)', `bench:mem:rrl:${subject}`],
      ['RateLimiterRedis counter (fixed window, no log)', rlfKeys[0] ?? 'missing'],
    ];
    const usages = await Promise.all(measured.map(([, key]) => memoryUsage(admin, key)));
    const rows = measured.map(([label], index) => {
      const usage = usages[index]!;
      // A packed log is one string: its entries are the checks written.
      const entries = label.startsWith('sluice packed') ? LOG_ENTRIES : usage.entries;
      return [label, formatCount(entries), usage.encoding, formatBytes(usage.bytes)];
    });
    const sluiceLog = usages[0]!.bytes;
    const dayBytes = usages[2]!.bytes;
    const sluiceBan = usages[4]!.bytes;
    const uuid = usages[5]!.bytes;
    rows.push(['sluice total per banned subject (packed log + ban)', '', '', formatBytes(sluiceLog + sluiceBan)]);
    const table = markdownTable(
      [{ header: 'key' }, { header: 'entries', align: 'right' }, { header: 'encoding' }, { header: 'MEMORY USAGE', align: 'right' }],
      rows,
    );
    const verdict =
      `sluice's packed log takes ${formatBytes(sluiceLog)} at ${LOG_ENTRIES} entries with request ids written together, ` +
      `${formatBytes(dayBytes)} spread over a day (target ≤ 400 B: ${sluiceLog <= 400 ? 'met' : 'not met'}, resp. ${dayBytes <= 400 ? 'met' : 'not met'}); ` +
      `the sorted set ${formatBytes(usages[3]!.bytes)}, the UUID log ${(uuid / sluiceLog).toFixed(2)}× the packed one; with a ban, ${formatBytes(sluiceLog + sluiceBan)}.`;
    return `${table}\n\n${verdict}`;
  } finally {
    await client.quit();
  }
}

function targets(redisRows: readonly Row[], memoryRows: readonly Row[]): string {
  const ratio = (rows: readonly Row[], name: string, reference: string, limits: Limits, loop: Row['loop']): number => {
    const find = (n: string): Row | undefined =>
      rows.find((r) => r.contender.name === n && r.contender.limits === limits && r.loop === loop);
    const a = find(name);
    const b = find(reference);
    return a && b ? rateOf(a) / rateOf(b) : Number.NaN;
  };
  const met = (ok: boolean): string => (ok ? 'met' : 'not met');
  const lines: string[] = [];
  for (const name of ['sluice RedisStore', 'sluice RedisStore, request ids']) {
    for (const limits of LIMITS) {
      const r = ratio(redisRows, name, 'RateLimiterRedis', limits, 'closed');
      const row = redisRows.find((x) => x.contender.name === name && x.contender.limits === limits);
      const redis = row?.cpu.redisMicros === undefined ? Number.NaN : row.cpu.redisMicros / row.result.decisions;
      const admitting =
        limits === 'large' ? ` Redis CPU ${redis.toFixed(1)} µs per admitting decision (target ≤ 6: ${met(redis <= 6)}).` : '';
      lines.push(`- ${name}, ${limits} limits: ${r.toFixed(2)}× RateLimiterRedis (target ≥ 3×: ${met(r >= 3)}).${admitting}`);
    }
  }
  for (const loop of ['closed', 'sequential'] as const) {
    for (const name of ['sluice MemoryStore', 'sluice MemoryStore, request ids']) {
      for (const limits of LIMITS) {
        const r = ratio(memoryRows, name, 'RateLimiterMemory', limits, loop);
        const target = limits === 'large' ? 1 : 2.5;
        lines.push(
          `- ${name}, ${limits} limits, ${loop === 'closed' ? `${IN_FLIGHT} in flight` : 'sequential'}: ` +
            `${r.toFixed(2)}× RateLimiterMemory (target ≥ ${target}×: ${met(r >= target)}).`,
        );
      }
    }
  }
  return lines.join('\n');
}

async function run(context: BenchContext): Promise<string> {
  const server = await startPrivateRedis();
  const admin = new Redis(server.url);
  let redisVersion = 'unknown';
  const redisRows: Row[] = [];
  let memoryTable: string;
  try {
    redisVersion = infoField(await admin.info('server'), 'redis_version') ?? redisVersion;
    for (const contender of redisContenders(server.url)) {
      await admin.flushall();
      redisRows.push(await measure(context, contender, 'closed', admin));
    }
    memoryTable = await measureMemory(server.url, admin);
  } finally {
    await admin.quit();
    await server.stop();
  }
  const memoryRows: Row[] = [];
  for (const loop of ['closed', 'sequential'] as const) {
    for (const contender of memoryContenders()) memoryRows.push(await measure(context, contender, loop, undefined));
  }

  const seconds = `${context.seconds} s measured per row after ${warmupMs(context) / 1_000} s of warm-up`;
  return [
    `Redis ${redisVersion} (a private redis-server on loopback, persistence off, on the same machine). ` +
      `${formatCount(SUBJECT_COUNT)} subjects picked uniformly at random; ${seconds}. ` +
      `"admitted" is the share of decisions that admitted; CPU is percent of one core over the measured span, ` +
      `and CPU time per decision (the steadier figure when the machine is shared).`,
    `### Redis-backed decisions (closed loop, ${IN_FLIGHT} in flight)`,
    throughputTable(redisRows, 'RateLimiterRedis', false),
    `### In-memory decisions`,
    throughputTable(memoryRows, 'RateLimiterMemory', true),
    `### Redis memory per subject (${LOG_ENTRIES} entries in the log)`,
    memoryTable,
    `### Targets in this run`,
    targets(redisRows, memoryRows),
  ].join('\n\n');
}

export const benchmark: Benchmark = { name: 'limiter', title: 'Limiter', run };

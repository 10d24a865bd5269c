/**
 * Real processes for the fault drills (docs/degradation.md "Measured"): a private redis-server that
 * can be killed, paused and restarted on the same port, a private PostgreSQL that can be stopped and
 * started on the same port and data directory, a sluice service child process, an open-loop load
 * generator that records every answer, and a /metrics poller. Loopback only; everything is stopped
 * by the test that started it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, chmodSync, chownSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../support/net.js';
import { spawnRedisServer } from '../support/private-redis.js';
import { sleep, until } from '../support/wait.js';

export { freePort, sleep };

const run = promisify(execFile);
const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;

export const now = () => performance.now();

export const redisBin = process.env.SLUICE_TEST_REDIS_BIN || undefined;

const PG_BIN = '/usr/lib/postgresql/15/bin';
/** The PostgreSQL 15 binaries scripts/test-servers.sh uses, when installed. */
export const pgBin = (() => {
  try {
    accessSync(join(PG_BIN, 'initdb'), constants.X_OK);
    accessSync(join(PG_BIN, 'pg_ctl'), constants.X_OK);
    return PG_BIN;
  } catch {
    return undefined;
  }
})();

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A redis-server of our own whose process we may kill, pause, resume and start again on the same port. */
export class FaultyRedis {
  private child: ChildProcess | undefined;

  private constructor(
    readonly bin: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(bin: string): Promise<FaultyRedis> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const redis = new FaultyRedis(bin, await freePort());
      if (await redis.startOnce()) return redis;
    }
    throw new Error('could not start a private redis-server');
  }

  /** One on a free port, not started yet: `restart()` starts it (a Redis that appears after sluice). */
  static async unstarted(bin: string): Promise<FaultyRedis> {
    return new FaultyRedis(bin, await freePort());
  }

  /** Starts (again) on this port; resolves once it accepts connections. */
  async restart(): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      if (await this.startOnce()) return;
      await sleep(100); // the old socket may linger a moment
    }
    throw new Error(`redis-server did not come back on port ${this.port}`);
  }

  private async startOnce(): Promise<boolean> {
    const child = await spawnRedisServer(this.bin, this.port);
    if (!child) return false;
    this.child = child;
    return true;
  }

  /** Kills the server (SIGKILL: no goodbye to clients) and waits for the process to end. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await this.kill();
  }
}

/**
 * A PostgreSQL cluster of our own (initdb into a temp dir), started and stopped with pg_ctl on a
 * fixed port, as scripts/test-servers.sh does: as root, run as `nobody` with the data dir chowned.
 */
export class FaultyPostgres {
  private constructor(
    readonly bin: string,
    readonly root: string,
    readonly port: number,
  ) {}

  get data(): string {
    return join(this.root, 'pg');
  }

  /** Database `postgres`, superuser `sluice`, trust auth on loopback. */
  get url(): string {
    return `postgres://sluice@127.0.0.1:${this.port}/postgres`;
  }

  private static runas(): string[] {
    return process.getuid?.() === 0 ? ['runuser', '-u', 'nobody', '--'] : [];
  }

  private async pg(tool: string, args: string[]): Promise<void> {
    const [command, ...rest] = [...FaultyPostgres.runas(), join(this.bin, tool), ...args];
    await run(command!, rest, { timeout: 30_000 });
  }

  static async create(bin: string, root: string): Promise<FaultyPostgres> {
    const postgres = new FaultyPostgres(bin, root, await freePort());
    mkdirSync(postgres.data);
    if (process.getuid?.() === 0) {
      chmodSync(root, 0o777);
      chownSync(postgres.data, 65534, 65534);
    }
    await postgres.pg('initdb', ['-D', postgres.data, '-U', 'sluice', '--auth=trust', '-E', 'UTF8']);
    await postgres.start();
    return postgres;
  }

  /** `pg_ctl start -w` on the same port and data dir; resolves once it accepts connections. */
  start(): Promise<void> {
    return this.pg('pg_ctl', [
      '-D',
      this.data,
      '-l',
      join(this.root, 'pg.log'),
      '-w',
      '-o',
      `-k ${this.data} -h 127.0.0.1 -p ${this.port} -c fsync=off`,
      'start',
    ]);
  }

  /** `pg_ctl stop -m fast`: sessions are terminated, open transactions roll back. */
  stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    return this.pg('pg_ctl', ['-D', this.data, '-m', mode, '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop('immediate').catch(() => undefined);
  }
}

/** A `sluice serve` child process. */
export interface Service {
  readonly base: string;
  readonly child: ChildProcess;
  /** The last lines the service wrote (pino JSON), for failure reports. */
  logTail(lines?: number): string;
  /** Every line the service wrote that contains `text` (e.g. breaker state changes). */
  logLines(text: string): string;
  stop(): Promise<void>;
}

export async function startService(env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'serve'], {
    env: { ...process.env, SLUICE_ROLES: 'api', SLUICE_LOG_LEVEL: 'warn', ...env, SLUICE_PORT: String(port), SLUICE_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const keep = (chunk: Buffer) => {
    log.push(...chunk.toString().split('\n').filter(Boolean));
    if (log.length > 5000) log.splice(0, log.length - 5000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  const service: Service = {
    base,
    child,
    logTail: (lines = 30) => log.slice(-lines).join('\n'),
    logLines: (text) => log.filter((line) => line.includes(text)).join('\n'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`sluice exited with ${child.exitCode}:\n${service.logTail()}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return service;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  await service.stop();
  throw new Error(`sluice did not start:\n${service.logTail()}`);
}

/** A tenant with one SMS rule, so every send consults the frequency limiter. */
export async function createTenant(base: string, adminToken: string): Promise<{ id: string; apiKey: string }> {
  const admin = { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' };
  const created = await fetch(`${base}/v1/admin/tenants`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: `fault-${Date.now()}` }),
  });
  if (created.status !== 201 && created.status !== 200) throw new Error(`create tenant: ${created.status} ${await created.text()}`);
  const tenant = (await created.json()) as { id: string; apiKey: string };
  const rules = await fetch(`${base}/v1/admin/tenants/${tenant.id}/rules/sms`, {
    method: 'PUT',
    headers: admin,
    body: JSON.stringify({ rules: [{ windowSeconds: 60, limit: 3, banSeconds: 0 }] }),
  });
  if (rules.status !== 200) throw new Error(`set rules: ${rules.status} ${await rules.text()}`);
  // Quotas too (far above the load), so the drills show they also go on in the fallback.
  const quotas = await fetch(`${base}/v1/admin/tenants/${tenant.id}`, {
    method: 'PATCH',
    headers: admin,
    body: JSON.stringify({ qpsLimit: 10_000, dailyQuotas: { sms: 1_000_000 } }),
  });
  if (quotas.status !== 200) throw new Error(`set quotas: ${quotas.status} ${await quotas.text()}`);
  return tenant;
}

/** One request of the load: when it was sent and answered (performance.now() ms), its status (0: no answer). */
export interface Sample {
  sentAt: number;
  doneAt: number;
  status: number;
  id?: string;
  code?: string;
}

/**
 * Open-loop load: `ratePerSecond` POST /v1/messages, each to a new recipient (the rule admits
 * all), whatever the previous requests are doing, so a stalled service shows up as latency and
 * not as a pause in the stream. Bounded by `maxRequests` and by {@link stop}.
 */
export class LoadLoop {
  readonly samples: Sample[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly base: string,
    private readonly apiKey: string,
    private readonly ratePerSecond: number,
    private readonly maxRequests: number,
    private readonly requestTimeoutMs = 15_000,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    const start = now();
    const interval = 1000 / this.ratePerSecond;
    for (let n = 0; n < this.maxRequests && this.running; n++) {
      const due = start + n * interval;
      const wait = due - now();
      if (wait > 1) await sleep(wait);
      if (!this.running) break;
      const request = this.send(n);
      this.inflight.add(request);
      void request.finally(() => this.inflight.delete(request));
    }
  }

  private async send(n: number): Promise<void> {
    const sample: Sample = { sentAt: now(), doneAt: 0, status: 0 };
    this.samples.push(sample);
    try {
      const response = await fetch(`${this.base}/v1/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', to: `+86139${String(n).padStart(8, '0')}`, body: `drill ${n}` }),
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
      const body = (await response.json()) as { id?: string; error?: { code?: string } };
      sample.status = response.status;
      if (body.id) sample.id = body.id;
      if (body.error?.code) sample.code = body.error.code;
    } catch {
      sample.status = 0;
    }
    sample.doneAt = now();
  }

  /** Stops sending and waits for every request in flight to be answered (or time out). */
  async stop(): Promise<Sample[]> {
    this.running = false;
    await this.done;
    await Promise.all([...this.inflight]);
    return this.samples;
  }
}

/** Sum of a metric's samples over all label sets in a Prometheus text exposition. */
export function metricValue(exposition: string, name: string): number {
  let sum = 0;
  let found = false;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    found = true;
  }
  return found ? sum : Number.NaN;
}

export interface BreakerReading {
  at: number;
  state: number;
  degraded: number;
}

/** Reads /metrics every `everyMs`: breaker state and degraded decisions over time. */
export class MetricsPoller {
  readonly readings: BreakerReading[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly base: string,
    everyMs = 50,
  ) {
    this.done = (async () => {
      while (this.running) {
        await this.read().catch(() => undefined);
        await sleep(everyMs);
      }
    })();
  }

  async read(): Promise<BreakerReading> {
    const text = await (await fetch(`${this.base}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    const reading = {
      at: now(),
      state: metricValue(text, 'sluice_breaker_state'),
      degraded: metricValue(text, 'sluice_degraded_decisions_total') || 0,
    };
    this.readings.push(reading);
    return reading;
  }

  /** First reading at or after `from` that satisfies `test`. */
  first(from: number, test: (reading: BreakerReading) => boolean): BreakerReading | undefined {
    return this.readings.find((reading) => reading.at >= from && test(reading));
  }

  /**
   * Whether every reading of the last `forMs` (at least a few) shows `state` and the same count of
   * degraded decisions: for state 0, "decisions have come from Redis alone for `forMs`".
   */
  steady(state: number, forMs: number): boolean {
    const from = now() - forMs;
    const recent = this.readings.filter((reading) => reading.at >= from);
    return (
      recent.length >= 3 &&
      (this.readings[0]?.at ?? now()) < from &&
      recent.every((reading) => reading.state === state && reading.degraded === recent[0]!.degraded)
    );
  }

  /** When the last run of readings showing `state` and the latest degraded count began. */
  steadySince(state: number): number | undefined {
    const last = this.readings.at(-1);
    if (!last || last.state !== state) return undefined;
    let since = last.at;
    for (let i = this.readings.length - 1; i >= 0; i--) {
      const reading = this.readings[i]!;
      if (reading.state !== state || reading.degraded !== last.degraded) break;
      since = reading.at;
    }
    return since;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** Waits until `test` holds (polled every 50 ms) or `timeoutMs` passes; the time it held, or undefined. */
export async function waitUntil(test: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number | undefined> {
  return until(test, { timeoutMs, intervalMs: 50 }).catch(() => undefined);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? 'n/a' : `${Math.round(value)} ms`);

/** Counts of statuses, e.g. `{202: 580, 503: 20}`. */
export function statusCounts(samples: Sample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const sample of samples) counts[sample.status] = (counts[sample.status] ?? 0) + 1;
  return counts;
}

/**
 * The change bus of instances that share a database without Redis (the embedded default, or
 * several instances on PostgreSQL without Redis), and of the CLI beside them: a change is told in
 * process at once and appended to a shared log; every instance reads the log's last seconds every
 * {@link POLL_MS} and tells its listeners of the keys other processes changed. So a blacklist
 * entry added by `sluice blacklist add` is refused by a running server within about a poll,
 * instead of up to SLUICE_CONFIG_CACHE_MS later.
 *
 * Reading a window (`at >= last read - OVERLAP_MS`) rather than a sequence keeps one code path on
 * every dialect and catches a row whose transaction committed after a later one; the ids already
 * told are remembered for the window. A read that finds the window full, or comes after reads
 * failed for longer than the log keeps rows, tells `'*'` (drop everything): a missed change costs
 * a reload, never a stale answer.
 */
import { randomUUID } from 'node:crypto';
import { type ChangeBus, InProcessChangeBus } from './change-bus.js';

/** How often an instance reads the log: the bound on how late another process's change is seen. */
export const POLL_MS = 250;
/** How far back each read looks, for rows committed late and clocks a little apart. */
const OVERLAP_MS = 5_000;
/** How long rows stay in the log. */
const KEEP_MS = 60_000;
/** Rows per read; a window fuller than this tells `'*'`. */
const READ_LIMIT = 500;

/** The shared log (storage's `ConfigChangesRepository`). */
export interface ChangeLog {
  append(key: string, origin: string, at: number, keepMs: number): Promise<void>;
  since(since: number, limit: number): Promise<{ id: string; key: string; origin: string }[]>;
}

export class SharedLogChangeBus implements ChangeBus {
  private readonly local = new InProcessChangeBus();
  /** This process: it skips its own rows (its listeners were told at publish). */
  private readonly origin = randomUUID();
  private readonly told = new Map<string, number>();
  private lastRead: number;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly log: ChangeLog,
    private readonly now: () => number,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.lastRead = now();
  }

  async publish(key: string): Promise<void> {
    await this.local.publish(key);
    await this.log.append(key, this.origin, this.now(), KEEP_MS);
  }

  /** The first subscriber starts the reads: a process that only publishes (a CLI command) reads nothing. */
  subscribe(listener: (key: string) => void): () => void {
    const unsubscribe = this.local.subscribe(listener);
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => {
        this.reading ??= this.read().finally(() => {
          this.reading = undefined;
        });
      }, POLL_MS);
      // Reads alone never keep a process alive.
      this.timer.unref();
    }
    return unsubscribe;
  }

  /** One read of the log: tells the keys other processes changed since the last read. */
  async read(): Promise<void> {
    const startedAt = this.now();
    const since = this.lastRead - OVERLAP_MS;
    let rows: { id: string; key: string; origin: string }[];
    try {
      rows = await this.log.since(since, READ_LIMIT);
    } catch (error) {
      // The next read covers the gap (lastRead stays), up to the log's minute.
      this.onError(error);
      return;
    }
    if (this.closed) return;
    const gapped = startedAt - this.lastRead > KEEP_MS - OVERLAP_MS;
    this.lastRead = startedAt;
    for (const [id, at] of this.told) if (at < since) this.told.delete(id);
    if (gapped || rows.length >= READ_LIMIT) {
      await this.local.publish('*');
      return;
    }
    for (const row of rows) {
      if (row.origin === this.origin || this.told.has(row.id)) continue;
      this.told.set(row.id, startedAt);
      await this.local.publish(row.key);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.reading;
    await this.local.close();
  }
}

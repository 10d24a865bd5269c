/**
 * Retention: finished messages (sent, failed, canceled) and their attempts are deleted once they
 * are older than `SLUICE_RETENTION_DAYS`. They hold recipients and bodies, which need not be kept
 * for ever, and a table that only grows slows every query that is not served by an index.
 *
 * Every worker purges, once a few minutes after it starts and then every hour, in batches of a
 * thousand (each its own short transaction, so SQLite's writers wait a moment at most). Two
 * workers purging at once delete disjoint or already-deleted rows: no lock is needed.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../limiter/clock.js';
import type { MessagesRepository } from '../storage/repositories/messages.js';

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  messages: Pick<MessagesRepository, 'purgeFinished'>;
  clock: Clock;
  logger: Logger;
  /** What is purged, as the log names it; default "finished messages". */
  what?: string;
  /** How long a finished message is kept. */
  retentionDays: number;
  /** Counts what was deleted (`sluice_messages_purged_total`). */
  onPurged?: (count: number) => void;
  /** Between passes; default an hour. */
  intervalMs?: number;
  /** Before the first pass; default five minutes, so a start is not slowed by it. */
  firstDelayMs?: number;
  /** Messages per transaction; default 1000. */
  batch?: number;
}

export class RetentionPurger {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(private readonly options: RetentionOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.options.firstDelayMs ?? 5 * 60_000);
  }

  /** Stops the timer and waits for a pass in progress to end its current batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One pass: batches until one comes back short. Resolves how many messages were deleted. */
  async purgeOnce(): Promise<number> {
    const { messages, clock, retentionDays } = this.options;
    const batch = this.options.batch ?? 1000;
    const before = clock.now() - retentionDays * DAY_MS;
    let total = 0;
    for (;;) {
      const deleted = await messages.purgeFinished({ before, limit: batch });
      total += deleted;
      if (deleted > 0) this.options.onPurged?.(deleted);
      if (deleted < batch || this.stopped) return total;
      // SQLite's driver is synchronous: without a turn of the event loop between batches, a pass
      // over a large backlog would hold up every request, probe and lock renewal until it ended.
      await yieldToEventLoop();
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.purgeOnce();
      this.running
        .then((count) => {
          if (count > 0)
            this.options.logger.info(
              { count, retentionDays: this.options.retentionDays },
              `${this.options.what ?? 'finished messages'} past their retention deleted`,
            );
        })
        .catch((error: unknown) =>
          this.options.logger.warn(
            { err: error },
            `purging ${this.options.what ?? 'finished messages'} failed; tried again at the next pass`,
          ),
        )
        .finally(() => {
          this.running = undefined;
          this.schedule(this.options.intervalMs ?? 3_600_000);
        });
    }, delayMs);
    this.timer.unref();
  }
}

/**
 * Keeping a partition's due index whole (Redis mode): its holder re-adds every pending message of
 * the partition from SQL when it takes the lock, every `everyMs` while it holds it, when the index
 * says it was flushed, and soon after a claim that may have dropped ids without moving them. SQL
 * is the truth; a flushed or lagging Redis loses nothing.
 */
import type { Logger } from 'pino';
import type { DueEntry, DueIndex } from './due-index/index.js';

/** The shortest time between two rebuilds asked for by failed claims. */
const FORCED_REBUILD_GAP_MS = 5000;

/** Rows per page read from SQL. */
const PAGE = 1000;

/** One keyset page (by id, after `afterId`) of what the index should hold. */
export type DuePages = (page: { afterId?: string; limit: number }) => Promise<DueEntry[]>;

export interface IndexRebuildOptions {
  /** The partition's name (`sms:0`) in the index. */
  partition: string;
  /** The pages of one rebuild, asked for at its start (the listing may depend on when it runs). */
  pages(): Promise<DuePages>;
  dueIndex: DueIndex;
  logger: Logger;
  /** Between two rebuilds while holding the lock. */
  everyMs: number;
}

export class IndexRebuild {
  private last = Number.NEGATIVE_INFINITY;
  /** When a rebuild asked for out of turn is due (epoch ms); Infinity: none asked for. */
  private forcedAt = Number.POSITIVE_INFINITY;

  constructor(private readonly options: IndexRebuildOptions) {}

  /** The lock was just taken: rebuild at once, whatever was rebuilt before. */
  onLockTaken(): void {
    this.last = Number.NEGATIVE_INFINITY;
  }

  /** Messages became claimable that the index does not hold (a tenant was resumed): rebuild at the next tick. */
  requestAt(now: number): void {
    this.forcedAt = now;
  }

  /**
   * After a claim that may have taken ids out of the index without moving them: rebuild at the
   * next tick instead of at the periodic one, but not more than once per
   * {@link FORCED_REBUILD_GAP_MS}, or a Redis that stays slow would get a full rebuild every poll.
   */
  requestSoon(): void {
    this.forcedAt = Math.min(this.forcedAt, this.last + FORCED_REBUILD_GAP_MS);
  }

  /** Rebuilds when one is due at `now` or the index asks for one. */
  async runIfDue(now: number): Promise<void> {
    const due = now - this.last >= this.options.everyMs || now >= this.forcedAt;
    if (!due && !(await this.options.dueIndex.needsRebuild(this.options.partition))) return;
    await this.rebuild();
    this.last = now;
    this.forcedAt = Number.POSITIVE_INFINITY;
  }

  /** Re-adds every pending message of the partition from SQL. */
  private async rebuild(): Promise<void> {
    const { partition, dueIndex } = this.options;
    const pages = await this.options.pages();
    async function* entries() {
      let afterId: string | undefined;
      for (;;) {
        const page = await pages({ limit: PAGE, ...(afterId ? { afterId } : {}) });
        yield* page;
        if (page.length < PAGE) return;
        afterId = page.at(-1)?.id;
      }
    }
    const missing = await dueIndex.rebuild(partition, entries());
    if (missing > 0) this.options.logger.info({ partition, missing }, 'due index rebuilt from SQL');
  }
}

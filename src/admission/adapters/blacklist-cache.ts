/**
 * The blacklist held in process, so admission answers "is this recipient blocked?" from memory
 * instead of one SQL query per message (that query was 13 % of the service's CPU under load).
 *
 * The whole table is loaded while it has at most `maxEntries` rows; beyond that lookups go to SQL
 * as before, so a huge global list costs latency, never memory. It is reloaded:
 * - when a change is announced on the config bus (`blacklist`, or `*` after a Redis reconnect);
 *   the instance making the change reloads before its admin call answers, the others within
 *   the bus's delay (milliseconds);
 * - when the table's fingerprint (row count, newest entry) differs from the loaded one, checked
 *   every `refreshMs` while the table is held: a safety net for a change made past sluice (SQL by
 *   hand) or a lost event.
 * Reloads never overlap; changes announced during one are picked up by one more reload.
 */
import { randomUUID } from 'node:crypto';
import type { Channel } from '../../core/channels.js';
import type { ChangeBus } from '../../infra/change-bus.js';
import type { BlacklistFingerprint, BlacklistRepository } from '../../storage/repositories/blacklist.js';
import { ANY } from '../../storage/schema.js';
import type { BlacklistLookup } from '../ports.js';

/** The bus key announcing a blacklist change; the announcing instance adds `:<its id>`. */
export const BLACKLIST_CHANGED = 'blacklist';

export interface BlacklistCacheOptions {
  /** Largest table held in memory (about 80 bytes per entry); above it, SQL answers. */
  maxEntries: number;
  /** How often the fingerprint is compared with SQL; 0 disables the check. */
  refreshMs: number;
  /** A failed background reload (the previous copy keeps answering). */
  onError?: (error: unknown) => void;
}

/** How long a change waits for its announcement on the bus before it answers anyway. */
const ANNOUNCE_TIMEOUT_MS = 1000;

const keyOf = (scope: string, channel: string, recipient: string) => `${scope}\u0000${channel}\u0000${recipient}`;

export class BlacklistCache implements BlacklistLookup {
  /** `undefined` until loaded, or while the table is larger than `maxEntries`: SQL answers. */
  private entries: Set<string> | undefined;
  private fingerprint: BlacklistFingerprint | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** A fingerprint check in progress (close waits for it: the database may be closed next). */
  private checking: Promise<void> | undefined;
  /** Marks this instance's own announcements: it has reloaded already, before announcing. */
  private readonly announcement = `${BLACKLIST_CHANGED}:${randomUUID()}`;

  constructor(
    private readonly repository: BlacklistRepository,
    private readonly bus: ChangeBus,
    private readonly options: BlacklistCacheOptions,
  ) {
    this.unsubscribe = bus.subscribe((key) => {
      if (key === this.announcement) return;
      if (key === '*' || key === BLACKLIST_CHANGED || key.startsWith(`${BLACKLIST_CHANGED}:`)) this.reloadInBackground();
    });
    if (options.refreshMs > 0) {
      this.timer = setInterval(() => {
        // A table too large to hold is asked in SQL anyway: no need to count it every few seconds.
        if (!this.entries || this.checking) return;
        this.checking = this.repository
          .fingerprint()
          .then(
            (current) => {
              if (!sameFingerprint(current, this.fingerprint)) this.reloadInBackground();
            },
            (error) => this.options.onError?.(error),
          )
          .finally(() => {
            this.checking = undefined;
          });
      }, options.refreshMs).unref();
    }
  }

  /** Whether the table is held in memory (false: too large, or not loaded yet). */
  get inMemory(): boolean {
    return this.entries !== undefined;
  }

  isBlacklisted(tenantId: string, channel: Channel, recipient: string): Promise<boolean> {
    const entries = this.entries;
    if (!entries) return this.repository.isBlacklisted(tenantId, channel, recipient);
    return Promise.resolve(
      entries.has(keyOf(tenantId, channel, recipient)) ||
        entries.has(keyOf(tenantId, ANY, recipient)) ||
        entries.has(keyOf(ANY, channel, recipient)) ||
        entries.has(keyOf(ANY, ANY, recipient)),
    );
  }

  /**
   * Loads the table now (at start, and after a change made through this instance). Resolves once
   * a load that began after this call has finished, so a change made before it is visible.
   */
  async reload(): Promise<void> {
    if (this.closed) return;
    if (this.reloading) {
      this.reloadAgain = true;
      // The running load may have read the table before the change: wait for the one after it.
      while (this.reloading) await this.reloading;
      return;
    }
    this.reloading = this.load().finally(() => {
      this.reloading = undefined;
      if (this.reloadAgain) {
        this.reloadAgain = false;
        this.reloadInBackground();
      }
    });
    return this.reloading;
  }

  /**
   * After a change in SQL: reload here, then tell every other instance. A bus that cannot be
   * reached (Redis down) does not fail the change, which SQL already holds: the other instances
   * find it at their next fingerprint check (`refreshMs`).
   */
  async changed(): Promise<void> {
    await this.reload();
    // Bounded: a Redis Cluster with no node up queues the publish with no timeout of its own.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`blacklist change notice timed out after ${ANNOUNCE_TIMEOUT_MS} ms`)), ANNOUNCE_TIMEOUT_MS);
    });
    await Promise.race([this.bus.publish(this.announcement), timeout])
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => clearTimeout(timer));
  }

  /** Stops reloading; waits for a reload in progress (the database may be closed next). */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    if (this.timer) clearInterval(this.timer);
    while (this.reloading || this.checking) await (this.reloading ?? this.checking)?.catch(() => undefined);
  }

  private reloadInBackground(): void {
    if (this.closed) return;
    this.reload().catch((error) => this.options.onError?.(error));
  }

  private async load(): Promise<void> {
    // The fingerprint first: a change landing during the read makes the next check reload again.
    const fingerprint = await this.repository.fingerprint();
    const rows = await this.repository.all(this.options.maxEntries + 1);
    this.fingerprint = fingerprint;
    if (rows.length > this.options.maxEntries) {
      this.entries = undefined;
      return;
    }
    const entries = new Set<string>();
    for (const row of rows) entries.add(keyOf(row.scope, row.channel, row.recipient));
    this.entries = entries;
  }
}

function sameFingerprint(a: BlacklistFingerprint, b: BlacklistFingerprint | undefined): boolean {
  return b !== undefined && a.count === b.count && a.newest === b.newest;
}

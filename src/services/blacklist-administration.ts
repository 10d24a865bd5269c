/**
 * A tenant's blacklist and the global one, for the admin API and the CLI (contract:
 * `BlacklistAdminService`). Entries are stored under the canonical keys sends are matched by; a
 * change reloads every instance's copy (this instance's before answering).
 */
import type { Channel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import { normalizeRecipient, readOnEveryChannel } from '../core/recipients.js';
import { hasControlCharacter } from '../core/text.js';
import type { BlacklistRepository } from '../storage/repositories/blacklist.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import { ANY } from '../storage/schema.js';
import type { BlacklistAdminService, BlacklistPage, BlacklistScope } from './contracts.js';
import { pageLimit, requireTenant } from './tenant-administration.js';

export interface BlacklistAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  blacklist: BlacklistRepository;
  defaultRegion: string;
  /** After a blacklist change in SQL: refresh the in-process copies (this instance's before answering). */
  blacklistChanged: () => Promise<void>;
}

export class BlacklistAdministration implements BlacklistAdminService {
  constructor(private readonly deps: BlacklistAdministrationDeps) {}

  /**
   * The keys stored for blacklist entries, as sends are keyed (`recipientKey`): on `*`, the key of
   * each channel that reads the text (channels' keys never coincide), so the entry matches a send
   * on every one of them. `invalid`: texts no channel (or not the given one) reads.
   */
  private blacklistKeys(channel: Channel | '*', recipients: string[]): { valid: string[]; invalid: string[] } {
    const valid = new Set<string>();
    const invalid: string[] = [];
    for (const input of recipients) {
      const keys =
        channel === '*'
          ? readOnEveryChannel(input, this.deps.defaultRegion).map((reading) => reading.key)
          : ((result) => (result.ok ? [result.key] : []))(normalizeRecipient(channel, input, this.deps.defaultRegion));
      if (keys.length === 0) invalid.push(input);
      for (const key of keys) valid.add(key);
    }
    return { valid: [...valid], invalid };
  }

  /** The storage scope of a blacklist: the tenant's id (NOT_FOUND if unknown) or `*`. */
  private async blacklistScope(scope: BlacklistScope): Promise<string> {
    if (scope === 'global') return ANY;
    await requireTenant(this.deps.tenants, scope.tenant);
    return scope.tenant;
  }

  async addToBlacklist(scope: BlacklistScope, channel: Channel | '*', recipients: string[], reason?: string) {
    const stored = await this.blacklistScope(scope);
    const { valid, invalid } = this.blacklistKeys(channel, recipients);
    for (const recipient of valid) await this.deps.blacklist.add({ scope: stored, channel, recipient, reason: reason ?? null });
    // The same reload and notice for the global list as for a tenant's: every instance holds the whole table.
    if (valid.length > 0) await this.deps.blacklistChanged();
    return { added: valid, invalid };
  }

  async removeFromBlacklist(scope: BlacklistScope, channel: Channel | '*', recipients: string[]) {
    const stored = await this.blacklistScope(scope);
    const { valid, invalid } = this.blacklistKeys(channel, recipients);
    let removed = 0;
    for (const recipient of valid) if (await this.deps.blacklist.remove({ scope: stored, channel, recipient })) removed++;
    if (removed > 0) await this.deps.blacklistChanged();
    return { removed, invalid };
  }

  async listBlacklist(
    scope: BlacklistScope,
    options: { channel?: Channel | '*'; limit?: number; after?: string } = {},
  ): Promise<BlacklistPage> {
    const limit = pageLimit(options.limit);
    const stored = await this.blacklistScope(scope);
    // One more than the page: whether there is a next page, without a count.
    const rows = await this.deps.blacklist.list(stored, {
      limit: limit + 1,
      ...(options.channel === undefined ? {} : { channel: options.channel }),
      ...(options.after === undefined ? {} : { after: decodeCursor(options.after) }),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page.map((entry) => ({
        channel: entry.channel,
        recipient: entry.recipient,
        reason: entry.reason,
        createdAt: new Date(entry.createdAt).toISOString(),
      })),
      next: rows.length > limit && last ? encodeCursor(last) : null,
    };
  }
}

/** A blacklist page cursor: the last entry's key, opaque to callers. */
function encodeCursor(entry: { channel: string; recipient: string }): string {
  return Buffer.from(JSON.stringify([entry.channel, entry.recipient])).toString('base64url');
}

function decodeCursor(cursor: string): { channel: string; recipient: string } {
  try {
    const [channel, recipient] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    // A forged cursor's text reaches the query: PostgreSQL refuses NUL in text (a 503 otherwise).
    if (typeof channel === 'string' && typeof recipient === 'string' && !hasControlCharacter(channel + recipient))
      return { channel, recipient };
  } catch {
    // Refused below.
  }
  throw new SluiceError('INVALID_REQUEST', "after: not a cursor (use a page's `next`)", { details: { field: 'after' } });
}

/**
 * A tenant's suppressions and consent record (contract: `SuppressionService`), for the tenant
 * API (source `api`), the admin API and the CLI (`admin`). Every change appends its line to the
 * consent record in the transaction that makes it (`SuppressionsRepository`).
 */
import type { Channel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import { normalizeRecipient } from '../core/recipients.js';
import { hasControlCharacter } from '../core/text.js';
import type { Clock } from '../limiter/index.js';
import type { ConsentRecord, Suppression, SuppressionsRepository } from '../storage/repositories/suppressions.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { ChangeEvidence, SuppressionService } from './contracts.js';
import { pageLimit, requireTenant } from './tenant-administration.js';
import type { ConsentRecordView, ConsentSourceName, SuppressionView } from './views.js';

/** A suppression's category: a send's (`CATEGORY` in validation) or `*`, every one. */
const CATEGORY_OR_ANY = /^(\*|[A-Za-z0-9._:-]{1,64})$/;

export interface SuppressionAdministrationDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  suppressions: SuppressionsRepository;
  clock: Clock;
  defaultRegion: string;
  /** Told each change (metrics). */
  changed?: (channel: Channel, action: 'suppressed' | 'unsuppressed', source: ConsentSourceName) => void;
}

type Change = { category?: string; reason?: string; source: 'api' | 'admin'; evidence?: ChangeEvidence };

export class SuppressionAdministration implements SuppressionService {
  constructor(private readonly deps: SuppressionAdministrationDeps) {}

  private async key(tenantId: string, channel: Channel, recipient: string): Promise<string> {
    await requireTenant(this.deps.tenants, tenantId);
    const normalized = normalizeRecipient(channel, recipient, this.deps.defaultRegion);
    if (!normalized.ok) throw new SluiceError('INVALID_REQUEST', normalized.reason, { details: { field: 'recipient' } });
    return normalized.key;
  }

  async get(tenantId: string, channel: Channel, recipient: string) {
    const key = await this.key(tenantId, channel, recipient);
    const suppressions = (await this.deps.suppressions.ofRecipient(tenantId, channel, key)).map(suppressionView);
    return { channel, recipient: key, suppressed: suppressions.length > 0, suppressions };
  }

  async suppress(tenantId: string, channel: Channel, recipient: string, change: Change) {
    const key = await this.key(tenantId, channel, recipient);
    const result = await this.deps.suppressions.suppress(this.changeOf(tenantId, channel, key, change, 'manual'));
    this.deps.changed?.(channel, 'suppressed', change.source);
    return { suppression: suppressionView(result.suppression), created: result.created };
  }

  async unsuppress(tenantId: string, channel: Channel, recipient: string, change: Change) {
    const key = await this.key(tenantId, channel, recipient);
    const removed = await this.deps.suppressions.unsuppress(this.changeOf(tenantId, channel, key, change, null));
    this.deps.changed?.(channel, 'unsuppressed', change.source);
    return { removed };
  }

  async list(
    tenantId: string,
    options: { channel?: Channel; category?: string; source?: ConsentSourceName; limit?: number; after?: string } = {},
  ) {
    const limit = pageLimit(options.limit);
    await requireTenant(this.deps.tenants, tenantId);
    const rows = await this.deps.suppressions.list(tenantId, {
      limit: limit + 1,
      ...(options.channel === undefined ? {} : { channel: options.channel }),
      ...(options.category === undefined ? {} : { category: checkedCategory(options.category) }),
      ...(options.source === undefined ? {} : { source: options.source }),
      ...(options.after === undefined ? {} : { after: afterEntry(decodeCursor(options.after)) }),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page.map(suppressionView),
      next: rows.length > limit && last ? encodeCursor([last.channel, last.recipient, last.category]) : null,
    };
  }

  async consent(tenantId: string, channel: Channel, recipient: string, options: { limit?: number; after?: string } = {}) {
    const limit = pageLimit(options.limit);
    const key = await this.key(tenantId, channel, recipient);
    const after = options.after === undefined ? undefined : decodeCursor(options.after)[0];
    const rows = await this.deps.suppressions.history(tenantId, channel, key, {
      limit: limit + 1,
      ...(after === undefined ? {} : { afterId: after }),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      channel,
      recipient: key,
      records: page.map(recordView),
      next: rows.length > limit && last ? encodeCursor([last.id]) : null,
    };
  }

  private changeOf(tenantId: string, channel: Channel, key: string, change: Change, defaultReason: string | null) {
    const evidence: Record<string, unknown> = {};
    if (change.evidence?.address) evidence.address = change.evidence.address;
    if (change.evidence?.userAgent) evidence.userAgent = change.evidence.userAgent.slice(0, 256);
    return {
      tenantId,
      channel,
      recipient: key,
      category: checkedCategory(change.category ?? '*'),
      source: change.source,
      reason: change.reason ?? defaultReason,
      evidence: Object.keys(evidence).length > 0 ? evidence : null,
      now: this.deps.clock.now(),
    };
  }
}

function checkedCategory(category: string): string {
  if (!CATEGORY_OR_ANY.test(category))
    throw new SluiceError('INVALID_REQUEST', '`category` is `*` or 1 to 64 letters, digits and . _ : -', {
      details: { field: 'category' },
    });
  return category;
}

export function suppressionView(suppression: Suppression): SuppressionView {
  return {
    channel: suppression.channel,
    recipient: suppression.recipient,
    category: suppression.category,
    source: suppression.source,
    reason: suppression.reason,
    createdAt: new Date(suppression.createdAt).toISOString(),
  };
}

export function recordView(record: ConsentRecord): ConsentRecordView {
  return { ...record, createdAt: new Date(record.createdAt).toISOString() };
}

function afterEntry([channel, recipient, category]: [string, string, string]) {
  return { channel, recipient, category };
}

function encodeCursor(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

function decodeCursor(cursor: string): [string, string, string] {
  try {
    const parts = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    // A forged cursor's text reaches the query: PostgreSQL refuses NUL in text (a 503 otherwise).
    if (Array.isArray(parts) && parts.every((part) => typeof part === 'string' && !hasControlCharacter(part)))
      return [parts[0] ?? '', parts[1] ?? '', parts[2] ?? ''] as [string, string, string];
  } catch {
    // Refused below.
  }
  throw new SluiceError('INVALID_REQUEST', "after: not a cursor (use a page's `next`)", { details: { field: 'after' } });
}

/**
 * The suppressions as admission and the last check before a send read them: SQL, one primary-key
 * query, no cache. A STOP must stop the next send on every instance at once, and a cache made
 * consistent by the change bus would still answer "not suppressed" for the bus's delay; the
 * benchmark row "suppression check" (docs/benchmarks.md) measures what the query costs.
 */
import type { Channel } from '../../core/channels.js';
import { normalizeRecipient } from '../../core/recipients.js';
import type { Message } from '../../storage/repositories/messages.js';
import type { SuppressionsRepository } from '../../storage/repositories/suppressions.js';
import type { SuppressionFound, SuppressionLookup } from '../ports.js';

/** Told each send a suppression stopped (metrics): at admission or before it left. */
export type SuppressedObserver = (channel: Channel, stage: 'admission' | 'delivery', source: string) => void;

export class SqlSuppressionDirectory implements SuppressionLookup {
  constructor(
    private readonly repository: Pick<SuppressionsRepository, 'find'>,
    private readonly defaultRegion: string,
    private readonly observe?: SuppressedObserver,
  ) {}

  async suppression(
    tenantId: string,
    channel: Channel,
    recipientKey: string,
    category: string | undefined,
  ): Promise<SuppressionFound | undefined> {
    const found = await this.repository.find(tenantId, channel, recipientKey, category);
    if (!found) return undefined;
    this.observe?.(channel, 'admission', found.source);
    return { category: found.category, source: found.source, reason: found.reason, since: found.createdAt };
  }

  /**
   * The delivery's last check (`SendGate.suppressed`): the message's recipient is stored as
   * delivered to, so its key is made again, as validation made it.
   */
  async beforeSend(message: Pick<Message, 'tenantId' | 'channel' | 'recipient' | 'payload'>): Promise<string | undefined> {
    const normalized = normalizeRecipient(message.channel, message.recipient, this.defaultRegion);
    if (!normalized.ok) return undefined;
    const found = await this.repository.find(message.tenantId, message.channel, normalized.key, message.payload.category);
    if (!found) return undefined;
    this.observe?.(message.channel, 'delivery', found.source);
    const category = found.category === '*' ? '' : ` for ${found.category}`;
    return `recipient suppressed${category} since ${new Date(found.createdAt).toISOString()} (${found.source}${found.reason ? `: ${found.reason}` : ''})`;
  }
}

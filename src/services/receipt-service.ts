/**
 * Vendors' delivery receipts pushed to `POST /v1/receipts/:providerId`: the push authenticated by
 * the provider's receipt token (the vendors sign nothing), read in the vendor's own format (its
 * kind's `receipts`, in `providers/<kind>.ts`), applied (`ReceiptsRepository`), answered as the
 * vendor expects. A receipt that names no message of the provider waits for its settle; an entry
 * that cannot be read is skipped and counted, never a 5xx.
 */
import { SluiceError } from '../core/errors.js';
import type { Clock } from '../limiter/index.js';
import { providerKind, RECEIPT_KINDS } from '../providers/kinds.js';
import type { Receipt } from '../providers/receipt.js';
import type { ProvidersRepository } from '../storage/repositories/providers.js';
import type { ReceiptOutcome, ReceiptsRepository } from '../storage/repositories/receipts.js';

/** What the receipt endpoint answers a vendor, and how many receipts it read. */
export interface ReceiptAnswer {
  body: Record<string, unknown>;
  outcomes: Record<ReceiptOutcome | 'unreadable', number>;
}

export interface ReceiptService {
  /** UNAUTHORIZED unless `token` is the receipt token of a provider that takes receipts. */
  authenticate(providerId: string, token: string | undefined): Promise<void>;
  /** UNAUTHORIZED for a wrong token or a provider without receipts; INVALID_REQUEST for a body that is no array. */
  receive(providerId: string, token: string | undefined, body: unknown): Promise<ReceiptAnswer>;
  /** A new receipt token for a provider that takes receipts (the previous one stops working); undefined: no such provider. */
  issueToken(providerId: string): Promise<{ token: string; path: string } | undefined>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export interface ReceiptIntakeDeps {
  providers: Pick<ProvidersRepository, 'get'>;
  receipts: Pick<ReceiptsRepository, 'apply' | 'checkToken' | 'issueToken'>;
  clock: Clock;
  /** Counts `count` receipts of one provider (its name), outcome and verdict. */
  onReceipt?: (provider: string, outcome: ReceiptOutcome | 'unreadable', delivered: boolean | undefined, count: number) => void;
}

export class ReceiptIntake implements ReceiptService {
  constructor(private readonly deps: ReceiptIntakeDeps) {}

  async authenticate(providerId: string, token: string | undefined): Promise<void> {
    await this.providerFor(providerId, token);
  }

  /** The provider and its format, when `token` is its receipt token. */
  private async providerFor(providerId: string, token: string | undefined) {
    const provider = await this.deps.providers.get(providerId);
    const format = provider ? providerKind(provider.kind)?.receipts : undefined;
    // One answer for an unknown provider and a wrong token: the endpoint tells a guesser nothing.
    if (!provider || !format || !token || !(await this.deps.receipts.checkToken(providerId, token)))
      throw new SluiceError('UNAUTHORIZED', 'unknown provider or wrong receipt token');
    return { provider, format };
  }

  async receive(providerId: string, token: string | undefined, body: unknown): Promise<ReceiptAnswer> {
    const now = this.deps.clock.now();
    const { provider, format } = await this.providerFor(providerId, token);
    if (!Array.isArray(body)) throw new SluiceError('INVALID_REQUEST', 'a receipt push is a JSON array of reports');
    const outcomes: ReceiptAnswer['outcomes'] = { applied: 0, pending: 0, duplicate: 0, unreadable: 0 };
    // Every entry: the answer tells the vendor the whole push was received, so none may be left
    // out. The body limit bounds how many there are.
    const receipts: Receipt[] = [];
    for (const entry of body) {
      const receipt = isRecord(entry) ? format.read(entry, now) : undefined;
      if (receipt) receipts.push(receipt);
      else outcomes.unreadable++;
    }
    const applied = receipts.length > 0 ? await this.deps.receipts.apply(providerId, receipts, now) : [];
    // Counted per (outcome, verdict), not per entry: a push of many thousands is a few increments.
    const counts = new Map<string, { outcome: ReceiptOutcome; delivered: boolean; count: number }>();
    applied.forEach((outcome, index) => {
      outcomes[outcome]++;
      const delivered = receipts[index]!.delivered;
      const key = `${outcome}:${delivered}`;
      const counted = counts.get(key);
      if (counted) counted.count++;
      else counts.set(key, { outcome, delivered, count: 1 });
    });
    if (outcomes.unreadable > 0) this.deps.onReceipt?.(provider.name, 'unreadable', undefined, outcomes.unreadable);
    for (const { outcome, delivered, count } of counts.values()) this.deps.onReceipt?.(provider.name, outcome, delivered, count);
    return { body: { ...format.answer }, outcomes };
  }

  async issueToken(providerId: string): Promise<{ token: string; path: string } | undefined> {
    const provider = await this.deps.providers.get(providerId);
    if (!provider) return undefined;
    if (providerKind(provider.kind)?.receipts === undefined)
      throw new SluiceError(
        'INVALID_REQUEST',
        `provider kind ${provider.kind} pushes no delivery receipts (only ${RECEIPT_KINDS.join(', ')})`,
      );
    const token = await this.deps.receipts.issueToken(providerId, this.deps.clock.now());
    return { token, path: `/v1/receipts/${encodeURIComponent(providerId)}?token=${token}` };
  }
}

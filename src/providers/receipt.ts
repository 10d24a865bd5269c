/**
 * Delivery receipts as a kind reads them: a vendor pushes a JSON array of reports to
 * `POST /v1/receipts/:providerId`; the kind's `receipts` format (its descriptor) reads each entry
 * into a {@link Receipt} and names the body the vendor expects back. The receipt service
 * authenticates and applies; the storage moves the messages.
 */

/** One receipt as a vendor reported it. */
export interface Receipt {
  providerMessageId: string;
  delivered: boolean;
  /** The vendor's own code (`DELIVERED`, `DELIVRD`, `UNDELIV`, `MK:0001`...). */
  code: string;
  /** When the phone got it, or the vendor gave up (epoch ms). */
  at: number;
}

/** How one vendor pushes its delivery receipts. A kind whose descriptor has none takes no receipts. */
export interface ReceiptFormat {
  /** The push as the vendor's docs call it (the receipt endpoint's OpenAPI summary lists them). */
  readonly name: string;
  /**
   * One entry of a push; undefined: unreadable (no id or no verdict), skipped and counted.
   * `now` stands in for a time the entry lacks or that cannot be read.
   */
  read(entry: Record<string, unknown>, now: number): Receipt | undefined;
  /** The body that tells the vendor its whole push was received. */
  readonly answer: Readonly<Record<string, unknown>>;
}

/** A report's field as text: vendors send ids and codes as strings or as numbers. */
export const receiptText = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** `2017-01-01 00:00:00` in China time (UTC+8, no daylight saving) as epoch ms; `fallback` when absent or unreadable. */
export function chinaTime(value: unknown, fallback: number): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(receiptText(value) ?? '');
  if (!match) return fallback;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const ms = Date.UTC(y!, mo! - 1, d!, h! - 8, mi!, s!);
  return Number.isFinite(ms) ? ms : fallback;
}

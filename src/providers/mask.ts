/**
 * Recipient masking for anything a human may read (logs, error messages, metrics labels):
 * enough to tell two recipients apart while debugging, not enough to contact either.
 *
 * - phone `+8613812340000` → `+86138****0000` (country code, 3 leading and 4 trailing digits)
 * - email `alice@example.com` → `a***@example.com`
 * - URL `https://open.feishu.cn/open-apis/bot/v2/hook/abc` → `https://open.feishu.cn/…` (paths carry tokens)
 * - a configured webhook name (`ops-alerts`) is not personal data and is kept
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';

const PHONE_LIKE = /^\+?[0-9][0-9 ()-]{4,}$/;

export function maskRecipient(recipient: string): string {
  const text = recipient.trim();
  if (text.includes('@') && !text.includes('://')) return maskEmail(text);
  if (PHONE_LIKE.test(text)) return maskPhone(text);
  if (/^https?:\/\//i.test(text)) return maskUrl(text);
  return text.length > 64 ? `${text.slice(0, 8)}…` : text;
}

function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

function maskPhone(phone: string): string {
  const parsed = phone.startsWith('+') ? parsePhoneNumberFromString(phone) : undefined;
  if (parsed) return `+${parsed.countryCallingCode}${maskDigits(String(parsed.nationalNumber))}`;
  const digits = phone.replace(/[^0-9]/g, '');
  return `${phone.startsWith('+') ? '+' : ''}${maskDigits(digits)}`;
}

function maskDigits(digits: string): string {
  if (digits.length >= 8) return `${digits.slice(0, 3)}****${digits.slice(-4)}`;
  if (digits.length >= 4) return `${digits.slice(0, 1)}****${digits.slice(-2)}`;
  return '****';
}

function maskUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}/…`;
  } catch {
    return '***';
  }
}

/** Replaces every clear occurrence of `recipient` in vendor text (which sometimes echoes it) by its mask. */
export function scrubRecipient(text: string, recipient: string): string {
  const masked = maskRecipient(recipient);
  let out = text;
  for (const form of new Set([recipient, recipient.replace(/^\+/, '')])) {
    if (form.length >= 5) out = out.split(form).join(masked);
  }
  return out;
}
